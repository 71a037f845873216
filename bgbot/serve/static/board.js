// bgbot's web board: draws positions as SVG and asks the server for everything else (no rules in here).
// A board is 26 signed counts from the side on roll's view: 1..24 its points (its checkers positive, white,
// moving 24 -> 1 with home at the bottom right), 25 its bar, 0 the opponent's bar (negative).
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

// the board from the other side's view
function flip(b) {
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
    fill: mine ? "#222" : "#eee", "font-weight": 700}, label));
}

const shown = {board: null};  // the board on screen, from the side on roll's view

function drawBoard(board, dice) {
  shown.board = board.slice();
  const svg = $("board");
  svg.innerHTML = "";
  const inner = 6 * PW;
  svg.appendChild(el("rect", {x: M, y: M, width: inner, height: H - 2 * M, fill: "#c9a66b"}));
  svg.appendChild(el("rect", {x: M + inner + BAR, y: M, width: inner, height: H - 2 * M, fill: "#c9a66b"}));
  svg.appendChild(el("rect", {x: M + inner, y: M, width: BAR, height: H - 2 * M, fill: "#4a3627"}));
  const tx = M + 2 * inner + BAR + 8;
  svg.appendChild(el("rect", {x: tx, y: M, width: TRAY - 8, height: H - 2 * M, fill: "#4a3627"}));
  for (let p = 1; p <= 24; p++) {
    const x = pointX(p), top = p >= 13;
    const y0 = top ? M : H - M, y1 = top ? M + 170 : H - M - 170;
    const color = p % 2 ? "#8c2f2f" : "#e9dcc0";
    svg.appendChild(el("polygon", {points: `${x},${y0} ${x + PW},${y0} ${x + PW / 2},${y1}`, fill: color,
      "data-point": p}));
    svg.appendChild(el("text", {x: x + PW / 2, y: top ? M - 1 + 12 : H - M - 3, "text-anchor": "middle",
      "font-size": 10, fill: "#222"}, String(p)));
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
  if (board[25] > 0) {  // the side on roll's checkers on the bar, entering at the top right
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
    "font-size": 13, id: "off-mine"}, `off ${15 - mine}`));
  svg.appendChild(el("text", {x: tx + (TRAY - 8) / 2, y: M + 22, "text-anchor": "middle", fill: "#aaa",
    "font-size": 13, id: "off-theirs"}, `off ${15 - theirs}`));
  if (dice) {
    dice.forEach((d, i) => {
      const x = M + inner + BAR + inner / 2 - 50 + i * 60, y = H / 2 - 20;
      svg.appendChild(el("rect", {x, y, width: 40, height: 40, rx: 6, fill: "#fff", stroke: "#333", class: "die"}));
      svg.appendChild(el("text", {x: x + 20, y: y + 28, "text-anchor": "middle", "font-size": 24,
        "font-weight": 700}, String(d)));
    });
  }
}

async function api(path, body) {
  const r = await fetch(path, {method: "POST", headers: {"content-type": "application/json"},
    body: JSON.stringify(body)});
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

function dice() { return [Number($("die1").value), Number($("die2").value)]; }

async function load(keepDice) {
  showError("");
  try {
    const s = await api("/v1/show", {position: $("position").value.trim()});
    if (keepDice !== true && s.state && s.state.dice) { $("die1").value = s.state.dice[0]; $("die2").value = s.state.dice[1]; }
    drawBoard(s.board, dice());
    $("ids").textContent = `Position ID: ${s.position}   ${s.xgid}\npips ${s.pips[0]} (on roll) - ${s.pips[1]}`;
    $("ids").dataset.position = s.position;
    $("moves").querySelector("tbody").innerHTML = "";
    $("result-info").textContent = "";
    return s;
  } catch (e) { showError(e); return null; }
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
    const body = $("moves").querySelector("tbody");
    body.innerHTML = "";
    for (const m of mv.moves) {
      const tr = document.createElement("tr");
      tr.className = "move-row";
      tr.dataset.result = m.result;
      tr.dataset.move = m.move;
      const p = m.probs;
      for (const v of [m.rank, m.move, sgn(m.equity), m.rank === 1 ? "" : sgn(m.diff), pct(p.win),
        pct(p.win_gammon), pct(p.win_backgammon), pct(p.lose_gammon), pct(p.lose_backgammon)]) {
        const td = document.createElement("td");
        td.textContent = v;
        tr.appendChild(td);
      }
      tr.children[1].className = "mv";
      tr.addEventListener("click", () => showResult(tr));
      body.appendChild(tr);
    }
    $("moves").dataset.kind = mv.equity_kind;
    if (cube) {
      const rows = [["No double", cube.equity_no_double], ["Double, take", cube.equity_double_take],
        ["Double, pass", cube.equity_double_pass]].filter((r) => r[1] !== null);
      $("cube").innerHTML = `<div class="decision" id="cube-decision"></div><table>${rows.map((r) =>
        `<tr><td>${r[0]}</td><td>${sgn(r[1])}</td></tr>`).join("")}</table>`;
      $("cube-decision").textContent = `${cube.decision_text} (win ${pct(cube.probs.win)}%, cubeless ${sgn(cube.cubeless_equity)})`;
    }
  } catch (e) { showError(e); }
}

async function showResult(tr) {
  document.querySelectorAll("tr.move-row.selected").forEach((r) => r.classList.remove("selected"));
  tr.classList.add("selected");
  try {
    const s = await api("/v1/show", {position: tr.dataset.result});
    drawBoard(flip(s.board), null);  // the mover's view of the position after its move
    $("result-info").textContent = `after ${tr.dataset.move}: ${s.position} (opponent on roll)`;
    $("result-info").dataset.result = s.position;
  } catch (e) { showError(e); }
}

// ---- setting a position up by dragging checkers (edit mode); the server checks and names the result
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

function startDrag(evt) {
  if (!$("edit").checked || !shown.board) return;
  const p = svgPoint(evt);
  const g = evt.target.closest ? evt.target.closest("g[data-point]") : null;
  let from, sign;
  if (g) {
    from = Number(g.dataset.point);
    sign = Math.sign(shown.board[from]);
  } else if (slotAt(p.x, p.y, true) === "off") {
    from = "off";
    sign = p.y > H / 2 ? 1 : -1;  // our borne-off checkers are at the bottom of the tray
    if (onCount(shown.board, sign) >= 15) return;
  } else return;
  if (!sign) return;
  evt.preventDefault();
  const ghost = el("circle", {cx: p.x, cy: p.y, r: R, fill: sign > 0 ? "#f4efe1" : "#2b2b2b", opacity: 0.7,
    "pointer-events": "none", id: "ghost"});
  $("board").appendChild(ghost);
  edit.drag = {from, sign, ghost};
}

function moveDrag(evt) {
  if (!edit.drag) return;
  const p = svgPoint(evt);
  edit.drag.ghost.setAttribute("cx", p.x);
  edit.drag.ghost.setAttribute("cy", p.y);
}

async function endDrag(evt) {
  if (!edit.drag) return;
  const {from, sign, ghost} = edit.drag;
  edit.drag = null;
  ghost.remove();
  const p = svgPoint(evt);
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
    drawBoard(s.board, dice());
    $("ids").textContent = `Position ID: ${s.position}   ${s.xgid}\npips ${s.pips[0]} (on roll) - ${s.pips[1]}`;
    $("moves").querySelector("tbody").innerHTML = "";
  } catch (e) { showError(e); }
}

const edit = {drag: null};

function roll() { return [1 + Math.floor(Math.random() * 6), 1 + Math.floor(Math.random() * 6)]; }

// ---- a game against bgbot: the page keeps the position from the human's view; the server moves for the bot
// Money play with the cube: owner "center", "you" or "bot"; the server makes bgbot's cube decisions.
const game = {pos: START, over: true, turns: 0, step: 0, cube: 1, owner: "center"};

function setStatus(text, over) {
  $("status").textContent = text;
  $("status").dataset.over = over ? "1" : "0";
}

function ownerFor(who) {  // the cube owner seen from "you" or "bot"
  if (game.owner === "center") return "center";
  return game.owner === who ? "me" : "opp";
}

function showCube() {
  const where = game.owner === "center" ? "centred" : game.owner === "you" ? "yours" : "bgbot's";
  $("game-cube").textContent = `cube ${game.cube} (${where})`;
  $("game-cube").dataset.value = game.cube;
}

function endGame(winner, points, why) {
  game.over = true;
  const kind = points === 3 * game.cube && !why ? " (backgammon)" : points === 2 * game.cube && !why ? " (gammon)" : "";
  setStatus(`Game over: ${winner} ${winner === "you" ? "win" : "wins"} ${points} point${points > 1 ? "s" : ""}${kind}${why || ""}`, true);
  $("status").dataset.winner = winner;
  $("status").dataset.points = points;
  $("legal").innerHTML = "";
}

function choices(buttons) {  // replace the choice buttons: [label, class, handler]
  const box = $("legal");
  box.innerHTML = "";
  for (const [label, cls, fn] of buttons) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = cls;
    b.textContent = label;
    b.addEventListener("click", fn);
    box.appendChild(b);
  }
  game.step += 1;
  box.dataset.turn = String(game.step);  // a new value at every choice: tests wait for it
}

async function humanStart() {  // before our roll: double or roll when the cube is ours to turn
  if (game.over) return;
  if ((game.owner === "center" || game.owner === "you") && game.cube < 64) {
    setStatus("Your turn: roll, or double.", false);
    choices([["Roll", "game-roll", () => humanTurn(roll())], [`Double to ${2 * game.cube}`, "game-double", humanDouble]]);
  } else {
    await humanTurn(roll());
  }
}

async function humanDouble() {
  try {
    const r = await api("/v1/play/take", {position: game.pos, cube: game.cube, owner: ownerFor("you"), ply: 1});
    if (!r.take) { endGame("you", game.cube, " (bgbot passes)"); return; }
    game.cube *= 2;
    game.owner = "bot";
    showCube();
    await humanTurn(roll());
    setStatus("bgbot takes. " + $("status").textContent, false);
  } catch (e) { showError(e); }
}

async function humanTurn(d) {
  if (game.over) return;
  try {
    const r = await api("/v1/moves", {position: game.pos, dice: d});
    drawBoard(r.board, d);
    setStatus(`Your roll: ${d[0]}-${d[1]}. Pick your move.`, false);
    choices(r.moves.map((m) => [m.move, "legal-move", () => playHuman(m)]));
  } catch (e) { showError(e); }
}

async function playHuman(m) {
  $("legal").innerHTML = "";
  drawBoard(m.board, null);
  game.turns += 1;
  if (m.game_over) { endGame("you", m.points * game.cube); return; }
  await botTurn(null, m.result, true);
}

async function botTurn(d, posId, mayDouble) {
  try {
    const body = {position: posId, ply: 1, cube: game.cube, owner: ownerFor("bot"),
      may_double: Boolean(mayDouble) && game.cube < 64};
    if (d) body.dice = d;
    const r = await api("/v1/play/bot", body);
    if (r.double) {
      setStatus(`bgbot doubles to ${2 * game.cube}: take or pass?`, false);
      choices([["Take", "game-take", async () => {
        game.cube *= 2; game.owner = "you"; showCube(); await botTurn(null, posId, false);
      }], ["Pass", "game-pass", () => endGame("bgbot", game.cube, " (you pass)")]]);
      return;
    }
    game.pos = r.result;
    game.turns += 1;
    drawBoard(r.board, null);
    $("status").dataset.bot = `${r.dice[0]}-${r.dice[1]}: ${r.move}`;
    if (r.game_over) { endGame("bgbot", r.points * game.cube); return; }
    await humanStart();
    if (game.over) return;
    setStatus(`bgbot rolled ${r.dice[0]}-${r.dice[1]} and played ${r.move}. ` + $("status").textContent, false);
  } catch (e) { showError(e); }
}

async function newGame() {
  showError("");
  Object.assign(game, {pos: START, over: false, turns: 0, cube: 1, owner: "center"});
  showCube();
  let d = roll();
  while (d[0] === d[1]) d = roll();
  if (d[0] > d[1]) await humanTurn(d);
  else await botTurn([d[1], d[0]], START, false);  // the opening roll is played by the side with the higher die
}

function init() {
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
  $("start").addEventListener("click", () => { $("position").value = START; load(false); });
  $("board").addEventListener("pointerdown", startDrag);
  window.addEventListener("pointermove", moveDrag);
  window.addEventListener("pointerup", endDrag);
  $("position").addEventListener("keydown", (e) => { if (e.key === "Enter") load(false); });
  load(false);
}

document.addEventListener("DOMContentLoaded", init);
