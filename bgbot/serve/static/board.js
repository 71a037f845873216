// bgbot's web board: draws what the server answers and sends what the person clicks. No rules in here: the
// server (/v1/board, bgbot/serve/board.py) says which actions and which checker hops are legal.
// A board is 26 signed counts from the bottom player's view: 1..24 its points (its checkers positive, white,
// moving 24 -> 1 with home at the bottom right), 25 its bar, 0 the top player's bar (negative).
"use strict";

const W = 800, H = 440, M = 10, PW = 50, BAR = 40, TRAY = 60, R = 18;
const SVG = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);
const START = "4HPwATDgc/ABMA";

function el(name, attrs, text) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function flip(b) {  // the board from the other side's view
  const out = new Array(26);
  for (let i = 0; i < 26; i++) out[i] = -b[25 - i];
  return out;
}

function pointX(p) {  // left edge of point p's column
  const right = M + 6 * PW + BAR;
  if (p >= 1 && p <= 6) return right + (6 - p) * PW;
  if (p >= 7 && p <= 12) return M + (12 - p) * PW;
  if (p >= 13 && p <= 18) return M + (p - 13) * PW;
  return right + (p - 19) * PW;
}

function drawChecker(g, cx, cy, mine, label) {
  g.appendChild(el("circle", {cx, cy, r: R, class: mine ? "ck-mine" : "ck-theirs",
    fill: mine ? "#f4efe1" : "#2b2b2b", stroke: mine ? "#8a7a5a" : "#000", "stroke-width": 2}));
  if (label) g.appendChild(el("text", {x: cx, y: cy + 5, "text-anchor": "middle", "font-size": 15,
    fill: mine ? "#222" : "#eee", "font-weight": 700, "pointer-events": "none"}, label));
}

function drawDie(svg, x, y, value, used, dark) {
  svg.appendChild(el("rect", {x, y, width: 40, height: 40, rx: 6, fill: dark ? "#2b2b2b" : "#fff",
    stroke: "#333", class: "die", "data-value": value, opacity: used ? 0.35 : 1}));
  svg.appendChild(el("text", {x: x + 20, y: y + 28, "text-anchor": "middle", "font-size": 24, "font-weight": 700,
    fill: dark ? "#eee" : "#222", opacity: used ? 0.35 : 1}, String(value)));
}

// ---- what is on screen: the board and its state (mirrored as data attributes on #board)
const shown = {board: null, mode: "analyse"};

// opts: {dice, diceLeft, botDice, cube: {value, owner: "center"|"bottom"|"top"}, score: {bottom, top, length},
// crawford}
function drawBoard(board, opts) {
  const o = opts || {};
  shown.board = board.slice();
  const svg = $("board");
  svg.innerHTML = "";
  const inner = 6 * PW;
  svg.appendChild(el("rect", {x: M, y: M, width: inner, height: H - 2 * M, fill: "#c9a66b"}));
  svg.appendChild(el("rect", {x: M + inner + BAR, y: M, width: inner, height: H - 2 * M, fill: "#c9a66b"}));
  svg.appendChild(el("rect", {x: M + inner, y: M, width: BAR, height: H - 2 * M, fill: "#4a3627"}));
  const tx = M + 2 * inner + BAR + 8;
  svg.appendChild(el("rect", {x: tx, y: M, width: TRAY - 8, height: H - 2 * M, fill: "#4a3627",
    "data-slot": "off"}));
  for (let p = 1; p <= 24; p++) {
    const x = pointX(p), top = p >= 13;
    const y0 = top ? M : H - M, y1 = top ? M + 170 : H - M - 170;
    const color = p % 2 ? "#8c2f2f" : "#e9dcc0";
    svg.appendChild(el("polygon", {points: `${x},${y0} ${x + PW},${y0} ${x + PW / 2},${y1}`, fill: color,
      "data-point": p, class: "point"}));
    svg.appendChild(el("text", {x: x + PW / 2, y: top ? M - 1 + 12 : H - M - 3, "text-anchor": "middle",
      "font-size": 10, fill: "#222", "pointer-events": "none"}, String(p)));
    const n = board[p];
    if (!n) continue;
    const g = el("g", {"data-point": p, "data-count": n});
    const k = Math.abs(n);
    for (let i = 0; i < Math.min(k, 5); i++) {
      const cy = top ? M + 16 + R + i * 2 * R : H - M - 16 - R - i * 2 * R;
      drawChecker(g, x + PW / 2, cy, n > 0, i === 4 && k > 5 ? String(k) : "");
    }
    svg.appendChild(g);
  }
  const bx = M + inner + BAR / 2;
  if (board[25] > 0) {  // the bottom player's checkers on the bar, entering at the top right
    const g = el("g", {"data-point": 25, "data-count": board[25]});
    drawChecker(g, bx, H / 2 - 60, true, board[25] > 1 ? String(board[25]) : "");
    svg.appendChild(g);
  }
  if (board[0] < 0) {
    const g = el("g", {"data-point": 0, "data-count": board[0]});
    drawChecker(g, bx, H / 2 + 60, false, board[0] < -1 ? String(-board[0]) : "");
    svg.appendChild(g);
  }
  let mine = 0, theirs = 0;
  for (let i = 0; i < 26; i++) { if (board[i] > 0) mine += board[i]; else theirs -= board[i]; }
  svg.appendChild(el("text", {x: tx + (TRAY - 8) / 2, y: H - M - 12, "text-anchor": "middle", fill: "#f4efe1",
    "font-size": 13, id: "off-mine", "pointer-events": "none"}, `off ${15 - mine}`));
  svg.appendChild(el("text", {x: tx + (TRAY - 8) / 2, y: M + 22, "text-anchor": "middle", fill: "#aaa",
    "font-size": 13, id: "off-theirs", "pointer-events": "none"}, `off ${15 - theirs}`));
  if (o.dice) {
    const left = (o.diceLeft || o.dice).slice();
    const dice = o.dice[0] === o.dice[1] ? [o.dice[0], o.dice[0], o.dice[0], o.dice[0]] : o.dice;
    const used = dice.map((d) => { const i = left.indexOf(d); if (i >= 0) { left.splice(i, 1); return false; } return true; });
    dice.forEach((d, i) => drawDie(svg, M + inner + BAR + inner / 2 - 25 * dice.length + 10 + i * 50, H / 2 - 20, d, used[i]));
  }
  if (o.botDice) {
    o.botDice.forEach((d, i) => drawDie(svg, M + inner / 2 - 45 + i * 50, H / 2 - 20, d, true, true));
  }
  if (o.cube) {  // the cube: on the bar when centred, at its owner's side otherwise
    const cy = o.cube.owner === "top" ? M + 8 : o.cube.owner === "bottom" ? H - M - 44 : H / 2 - 18;
    const g = el("g", {id: "cube-face", "data-value": o.cube.value, "data-owner": o.cube.owner});
    g.appendChild(el("rect", {x: bx - 18, y: cy, width: 36, height: 36, rx: 5, fill: o.crawford ? "#999" : "#fffbe8",
      stroke: "#222", "stroke-width": 2}));
    g.appendChild(el("text", {x: bx, y: cy + 25, "text-anchor": "middle", "font-size": o.cube.value >= 10 ? 15 : 20,
      "font-weight": 700}, o.crawford ? "C" : String(o.cube.value === 1 ? 64 : o.cube.value)));
    svg.appendChild(g);
  }
  if (o.score) {  // the score in the tray: the top player's above the middle, the bottom player's below
    const cx = tx + (TRAY - 8) / 2;
    const t = (y, size, text, id) => svg.appendChild(el("text", {x: cx, y, "text-anchor": "middle", "font-size": size,
      fill: "#f4efe1", "font-weight": 700, id, "pointer-events": "none"}, text));
    t(H / 2 - 62, 11, "bgbot");
    t(H / 2 - 38, 22, String(o.score.top), "score-top");
    t(H / 2 + 4, 11, o.score.length ? `${o.score.length}-pt` : "money", "score-length");
    if (o.crawford) t(H / 2 + 18, 10, "Crawford", "score-crawford");
    t(H / 2 + 48, 22, String(o.score.bottom), "score-bottom");
    t(H / 2 + 62, 11, "you");
  }
}

// the state of what is shown, for tests and tools (see index.html)
function setState(attrs, idsText) {
  const b = $("board");
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined) b.removeAttribute(`data-${k}`);
    else b.setAttribute(`data-${k}`, String(v));
  }
  $("ids").textContent = idsText;
}

async function api(path, body, method) {
  const init = {method: method || "POST", headers: {"content-type": "application/json"}};
  if (body !== undefined) init.body = JSON.stringify(body);
  const r = await fetch(path, init);
  const data = await r.json();
  if (!r.ok) {
    const msg = data.error ? `${data.error.field ? data.error.field + ": " : ""}${data.error.message}` : r.statusText;
    throw new Error(msg);
  }
  return data;
}

function showError(e) { $("error").textContent = e ? String(e.message || e) : ""; }
const pct = (v) => (100 * v).toFixed(1);
const sgn = (v) => (v >= 0 ? "+" : "") + v.toFixed(3);

// ---- analysing a position ----------------------------------------------------------------------------
function dice() { return [Number($("die1").value), Number($("die2").value)]; }

function showPosition(s, d) {
  shown.mode = "analyse";
  drawBoard(s.board, {dice: d});
  setState({"position-id": s.position, xgid: s.xgid, pips: `${s.pips[0]} ${s.pips[1]}`,
    cube: s.state ? `${s.state.cube.value} ${s.state.cube.owner}` : "1 center",
    score: s.state ? `${s.state.score[0]} ${s.state.score[1]} ${s.state.match}` : "0 0 0",
    dice: d ? d.join(" ") : null, crawford: s.state && s.state.crawford ? 1 : 0, phase: null, mode: "analyse"},
  `Position ID: ${s.position}   ${s.xgid}\npips ${s.pips[0]} (on roll) - ${s.pips[1]}`);
  $("ids").dataset.position = s.position;
}

async function load(keepDice) {
  showError("");
  try {
    const s = await api("/v1/show", {position: $("position").value.trim()});
    if (keepDice !== true && s.state && s.state.dice) { $("die1").value = s.state.dice[0]; $("die2").value = s.state.dice[1]; }
    showPosition(s, dice());
    $("moves").querySelector("tbody").innerHTML = "";
    $("result-info").textContent = "";
    return s;
  } catch (e) { showError(e); return null; }
}

function fillMoves(body, moves, onClick) {
  body.innerHTML = "";
  for (const m of moves) {
    const tr = document.createElement("tr");
    tr.className = "move-row";
    tr.dataset.result = m.result;
    tr.dataset.move = m.move;
    const p = m.probs;
    const eq = m.mwc !== null && m.mwc !== undefined ? `${sgn(m.equity)} (${pct(m.mwc)}%)` : sgn(m.equity);
    for (const v of [m.rank, m.move, eq, m.rank === 1 ? "" : sgn(m.diff), pct(p.win),
      pct(p.win_gammon), pct(p.win_backgammon), pct(p.lose_gammon), pct(p.lose_backgammon)]) {
      const td = document.createElement("td");
      td.textContent = v;
      tr.appendChild(td);
    }
    tr.children[1].className = "mv";
    if (onClick) tr.addEventListener("click", () => onClick(tr));
    body.appendChild(tr);
  }
}

function cubeTable(cube) {  // equities (and MWC in a match) of the three cube actions
  const mwc = (v) => (v === null || v === undefined ? "" : ` (${pct(v)}%)`);
  const rows = [["No double", cube.equity_no_double, cube.mwc_no_double],
    ["Double, take", cube.equity_double_take, cube.mwc_double_take],
    ["Double, pass", cube.equity_double_pass, cube.mwc_double_pass]].filter((r) => r[1] !== null);
  return `<table>${rows.map((r) => `<tr><td>${r[0]}</td><td>${sgn(r[1])}${mwc(r[2])}</td></tr>`).join("")}</table>`;
}

async function analyse() {
  const s = await load(true);  // the dice picked, not the ones an XGID carries
  if (!s) return;
  const position = $("position").value.trim(), ply = Number($("ply").value);
  try {
    const [mv, cube] = await Promise.all([
      api("/v1/move", {position, dice: dice(), ply}),
      s.game_over ? null : api("/v1/cube", {position, ply}),
    ]);
    fillMoves($("moves").querySelector("tbody"), mv.moves, showResult);
    $("moves").dataset.kind = mv.equity_kind;
    if (cube) {
      $("cube").innerHTML = `<div class="decision" id="cube-decision"></div>${cubeTable(cube)}`;
      $("cube-decision").textContent = `${cube.decision_text} (win ${pct(cube.probs.win)}%, cubeless ${sgn(cube.cubeless_equity)})`;
    }
  } catch (e) { showError(e); }
}

async function showResult(tr) {
  document.querySelectorAll("#moves tr.move-row.selected").forEach((r) => r.classList.remove("selected"));
  tr.classList.add("selected");
  try {
    const s = await api("/v1/show", {position: tr.dataset.result});
    shown.mode = "analyse";
    drawBoard(flip(s.board), null);  // the mover's view of the position after its move
    $("result-info").textContent = `after ${tr.dataset.move}: ${s.position} (opponent on roll)`;
    $("result-info").dataset.result = s.position;
  } catch (e) { showError(e); }
}

// ---- a game against bgbot: the server keeps it, the page draws its state ---------------------------------
const game = {id: null, state: null, busy: false};
const OWNER = {center: "center", you: "bottom", bgbot: "top"};

function render(st) {
  game.state = st;
  shown.mode = "play";
  const t = st.turn;
  const score = st.match ? `you ${st.score[0]} - bgbot ${st.score[1]} (${st.match}-point match${st.crawford ? ", Crawford" : ""})`
    : `you ${st.score[0]} - bgbot ${st.score[1]} (money)`;
  drawBoard(st.board, {dice: st.dice, diceLeft: t ? t.dice_left : null, cube: {value: st.cube.value,
    owner: OWNER[st.cube.owner]}, crawford: st.crawford,
  score: {bottom: st.score[0], top: st.score[1], length: st.match},
  botDice: st.phase === "roll" || st.phase === "take" ? st.bot_dice : null});
  setState({"position-id": st.position_id, xgid: st.xgid, pips: `${st.pips[0]} ${st.pips[1]}`,
    cube: `${st.cube.value} ${st.cube.owner}`, score: `${st.score[0]} ${st.score[1]} ${st.match}`,
    dice: st.dice ? st.dice.join(" ") : "", crawford: st.crawford ? 1 : 0, phase: st.phase, mode: "play",
    game: st.game, actions: st.actions.join(" "), "game-id": st.id},
  `Position ID: ${st.position_id}   ${st.xgid}\npips: you ${st.pips[0]} - bgbot ${st.pips[1]}`);
  $("scoreboard").innerHTML = "";
  const sb = $("scoreboard");
  sb.textContent = score + ` · game ${st.game} · cube ${st.cube.value} (${st.cube.owner === "center" ? "centred" : st.cube.owner === "you" ? "yours" : "bgbot's"})`;
  if (st.crawford) {
    const c = document.createElement("span");
    c.className = "crawford";
    c.id = "crawford-flag";
    c.textContent = "CRAWFORD";
    sb.appendChild(c);
  }
  const acts = new Set(st.actions);
  document.querySelector("#controls .resign").hidden = !st.resign_levels.length;
  for (const b of document.querySelectorAll("#controls button")) {
    const a = b.dataset.action;
    let on = acts.has(a);
    if (a === "resign") on = on && st.resign_levels.includes(Number(b.dataset.level));
    b.disabled = !on;
    b.hidden = !on;
  }
  const last = st.events.length ? st.events[st.events.length - 1] : "";
  let text;
  if (st.phase === "match_over") text = `Match over: ${st.match_winner} ${st.match_winner === "you" ? "win" : "wins"} ${st.score[0]}-${st.score[1]}.`;
  else if (st.phase === "game_over") text = `Game over: ${last}`;
  else if (st.phase === "take") text = `bgbot doubles to ${2 * st.cube.value}: take or pass?`;
  else if (st.phase === "roll") text = `Your turn: roll${acts.has("double") ? " or double" : ""}.`;
  else text = t.complete ? `You play ${t.text}: press "Play move" (or Undo).` : `Your roll: ${st.dice[0]}-${st.dice[1]}. Move your checkers${t.text ? ` (so far ${t.text})` : ""}.`;
  $("status").textContent = text;
  $("status").dataset.over = st.phase === "match_over" || st.phase === "game_over" ? "1" : "0";
  $("status").dataset.phase = st.phase;
  if (st.result) { $("status").dataset.winner = st.result.winner; $("status").dataset.points = st.result.points; }
  const log = $("log");
  log.innerHTML = "";
  for (const line of st.events.slice(-12)) {
    const d = document.createElement("div");
    d.textContent = line;
    log.appendChild(d);
  }
  $("rec-mat").href = `/v1/board/${st.id}/record?format=mat`;
  $("rec-sgf").href = `/v1/board/${st.id}/record?format=sgf`;
  $("btn-hint").disabled = !(st.phase === "roll" || st.phase === "move" || st.phase === "take");
  game.step = (game.step || 0) + 1;
  $("controls").dataset.turn = String(game.step);  // a new value at every state: tests wait for it
}

async function send(path, body) {
  if (!game.id || game.busy) return;
  game.busy = true;
  showError("");
  try {
    render(await api(`/v1/board/${game.id}/${path}`, body));
    if (path !== "hop" && path !== "undo") $("hint").innerHTML = "";
  } catch (e) {
    showError(e);
  } finally { game.busy = false; }
}

async function newGame() {
  showError("");
  $("hint").innerHTML = "";
  const body = {match: Number($("match-length").value), ply: Number($("bot-ply").value)};
  if ($("jacoby").checked && body.match === 0) body.jacoby = true;
  const seed = new URLSearchParams(window.location.search).get("seed");  // /?seed=N: the same dice again
  if (seed !== null && /^[0-9]{1,9}$/.test(seed)) body.seed = Number(seed);
  try {
    const st = await api("/v1/board", body);
    game.id = st.id;
    render(st);
  } catch (e) { showError(e); }
}

async function hint() {
  if (!game.id) return;
  const box = $("hint");
  box.textContent = "thinking...";
  try {
    const h = await api(`/v1/board/${game.id}/hint`, {ply: Number($("hint-ply").value)});
    box.innerHTML = "";
    box.dataset.kind = h.kind;
    if (h.kind === "move") {
      const t = document.createElement("table");
      t.id = "hint-moves";
      t.innerHTML = "<thead><tr><th>#</th><th>move</th><th>" + (game.state.match ? "equity (MWC)" : "equity") +
        "</th><th>diff</th><th>win</th><th>w-g</th><th>w-bg</th><th>l-g</th><th>l-bg</th></tr></thead><tbody></tbody>";
      fillMoves(t.querySelector("tbody"), h.moves.slice(0, 8), null);
      box.appendChild(t);
    } else {
      const head = document.createElement("div");
      head.className = "decision";
      head.id = "hint-decision";
      head.textContent = h.kind === "take" ? `${h.decision_text}: you should ${h.advice}` : h.decision_text;
      box.appendChild(head);
      const tbl = document.createElement("div");
      tbl.innerHTML = cubeTable(h);
      box.appendChild(tbl);
    }
  } catch (e) { box.textContent = ""; showError(e); }
}

// ---- mouse and touch: set-up drags (analysis) and checker moves (play) ---------------------------------
function svgPoint(evt) {
  const svg = $("board");
  const pt = svg.createSVGPoint();
  pt.x = evt.clientX; pt.y = evt.clientY;
  return pt.matrixTransform(svg.getScreenCTM().inverse());
}

function slotAt(x, y, mine) {  // the board slot under (x, y): 1..24, a bar (25 ours, 0 theirs) or "off"
  const inner = 6 * PW, right = M + inner + BAR, tx = M + 2 * inner + BAR + 8;
  if (x >= tx) return "off";
  if (x >= M + inner && x < right) return mine ? 25 : 0;
  const top = y < H / 2;
  const clamp = (c) => Math.max(0, Math.min(5, c));
  if (x < M + inner) { const c = clamp(Math.floor((x - M) / PW)); return top ? 13 + c : 12 - c; }
  const c = clamp(Math.floor((x - right) / PW));
  return top ? 19 + c : 6 - c;
}

function onCount(board, sign) {
  let n = 0;
  for (const v of board) if (v * sign > 0) n += Math.abs(v);
  return n;
}

function playTargets(from) {  // the server's legal hops of the checker on `from`
  const st = game.state;
  if (!st || st.phase !== "move" || !st.turn) return [];
  return st.turn.targets.filter((t) => t.from === from);
}

const drag = {cur: null};

function startDrag(evt) {
  if (!shown.board) return;
  const p = svgPoint(evt);
  const g = evt.target.closest ? evt.target.closest("g[data-point]") : null;
  let from, sign;
  if (shown.mode === "play") {
    if (!g) return;
    from = Number(g.dataset.point);
    if (shown.board[from] <= 0) return;
    const targets = playTargets(from);
    if (!targets.length) { showError(`no legal move for the checker on ${from === 25 ? "the bar" : "point " + from}`); return; }
    sign = 1;
    for (const t of targets) {  // light up where the checker may go
      const poly = $("board").querySelector(`polygon[data-point='${t.to}']`);
      if (poly) poly.classList.add("target");
    }
  } else {
    if (!$("edit").checked) return;
    if (g) {
      from = Number(g.dataset.point);
      sign = Math.sign(shown.board[from]);
    } else if (slotAt(p.x, p.y, true) === "off") {
      from = "off";
      sign = p.y > H / 2 ? 1 : -1;  // our borne-off checkers are at the bottom of the tray
      if (onCount(shown.board, sign) >= 15) return;
    } else return;
    if (!sign) return;
  }
  evt.preventDefault();
  const ghost = el("circle", {cx: p.x, cy: p.y, r: R, fill: sign > 0 ? "#f4efe1" : "#2b2b2b", opacity: 0.7,
    "pointer-events": "none", id: "ghost"});
  $("board").appendChild(ghost);
  drag.cur = {from, sign, ghost, x: p.x, y: p.y};
}

function moveDrag(evt) {
  if (!drag.cur) return;
  const p = svgPoint(evt);
  drag.cur.ghost.setAttribute("cx", p.x);
  drag.cur.ghost.setAttribute("cy", p.y);
}

async function endDrag(evt) {
  if (!drag.cur) return;
  const {from, sign, ghost, x, y} = drag.cur;
  drag.cur = null;
  ghost.remove();
  const p = svgPoint(evt);
  if (shown.mode === "play") {
    const moved = Math.hypot(p.x - x, p.y - y) > 6;
    const targets = playTargets(from);
    let to;
    if (!moved) {  // a click: the larger die first (fewest dice, farthest)
      const best = targets.slice().sort((a, b) => a.steps - b.steps || a.to - b.to)[0];
      to = best ? best.to : null;
    } else {
      const slot = slotAt(p.x, p.y, true);
      to = slot === "off" ? 0 : slot;
    }
    if (to === null || !targets.some((t) => t.to === to)) {
      render(game.state);
      if (to !== from) showError(`${from === 25 ? "bar" : from}/${to === 0 ? "off" : to} is not a legal move here`);
      return;
    }
    await send("hop", {from, to});
    return;
  }
  const to = slotAt(p.x, p.y, sign > 0);
  if (to === from) return;
  const b = shown.board.slice();
  if (from !== "off") b[from] -= sign;
  if (to !== "off") {
    if (b[to] * sign < 0) { showError(`point ${to} holds the other side's checkers`); return; }
    b[to] += sign;
  }
  try {
    const s = await api("/v1/show", {board: b});
    showError("");
    $("position").value = s.position;
    showPosition(s, dice());
    $("moves").querySelector("tbody").innerHTML = "";
  } catch (e) { showError(e); }
}

function roll() { return [1 + Math.floor(Math.random() * 6), 1 + Math.floor(Math.random() * 6)]; }

async function init() {
  for (const id of ["die1", "die2"]) {
    for (let v = 1; v <= 6; v++) {
      const o = document.createElement("option");
      o.value = v; o.textContent = v;
      $(id).appendChild(o);
    }
  }
  $("die1").value = 3; $("die2").value = 1;
  $("load").addEventListener("click", () => load(false));
  $("analyse").addEventListener("click", analyse);
  $("roll").addEventListener("click", () => { const d = roll(); $("die1").value = d[0]; $("die2").value = d[1]; load(true); });
  $("newgame").addEventListener("click", newGame);
  $("btn-hint").addEventListener("click", hint);
  for (const b of document.querySelectorAll("#controls button")) {
    b.hidden = true;
    b.addEventListener("click", () => send(b.dataset.action, b.dataset.action === "resign" ? {level: Number(b.dataset.level)} : undefined));
  }
  $("start").addEventListener("click", () => { $("position").value = START; load(false); });
  $("board").addEventListener("pointerdown", startDrag);
  window.addEventListener("pointermove", moveDrag);
  window.addEventListener("pointerup", endDrag);
  $("position").addEventListener("keydown", (e) => { if (e.key === "Enter") load(false); });
  try {  // the plies this server allows
    const h = await api("/v1/health", undefined, "GET");
    for (const id of ["ply", "bot-ply", "hint-ply"]) {
      $(id).innerHTML = "";
      for (let v = 1; v <= h.max_ply; v++) {
        const o = document.createElement("option");
        o.value = v; o.textContent = v;
        $(id).appendChild(o);
      }
    }
    $("hint-ply").value = Math.min(2, h.max_ply);
  } catch (e) { showError(e); }
  await load(false);
  document.body.dataset.ready = "1";
}

document.addEventListener("DOMContentLoaded", init);
