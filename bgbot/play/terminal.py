"""Terminal play: a person against bgbot, money games or a match, with the cube.

``bgbot play [--ply N] [--match N] [--resume FILE]`` shows an ASCII board (you
are X, at the bottom, moving from your 24-point to your 1-point) and reads
your answers line by line, so it can be driven by a script on stdin as well
as by a person:

* a move in standard notation (``24/18 13/11``, ``bar/22*``, ``6/off``,
  ``8/5(2)``); unreadable, illegal or ambiguous text gets a message saying
  why and the question again.  The move is shown and your turn ends with
  Enter; ``undo`` takes the move back (until then no dice are rolled);
* before your roll: ``roll`` (or Enter) or ``double`` -- asked only when the
  cube is alive for you (never in the Crawford game, in a 1-point match or
  when the cube already gives you the match: gnubg's dead-cube rule);
* facing a double: ``take`` or ``pass``;
* on your turn: ``resign`` (a single game), ``resign gammon``, ``resign
  backgammon``: bgbot accepts when the points offered are at least what it
  expects from playing on (its cubeless equity, or its match winning chance
  at the score, as gnubg's players judge a resignation); ``save [FILE]``
  writes the match so far, the game in progress included, to take it up
  later with ``bgbot play --resume FILE`` (the dice seed is kept in the
  file, so the game goes on with the dice it would have had);
* at any question: ``hint`` (the engine's ranked moves with equities, and
  match winning chances in a match; or its cube action), ``board``,
  ``help``, ``quit``.

The game is refereed by :mod:`bgbot.play.table`, exactly as in a pit.  A move
with a single legal play is made for you (and shown).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np

from bgbot import fileio
from bgbot.engine.api import describe_action
from bgbot.errors import BgbotError, InvalidMoveError, QuitSession, RecordError
from bgbot.formats.board import render_board
from bgbot.formats.records import MatchRecord, PlayedGame, RecordEntry
from bgbot.play.bots.base import BaseBot
from bgbot.play.bots.local import BgbotBot
from bgbot.play.match import play_match
from bgbot.play.table import RESIGN_NAMES, GameResult, Resignation, Resume, Rules, play_game
from bgbot.rules.dice import Dice
from bgbot.rules.matchstate import MatchState
from bgbot.rules.moves import legal_moves, parse_move
from bgbot.rules.position import Position

HELP = """\
Answers:
  a move like 24/18 13/11, bar/22*, 6/off or 8/5(2)   (your points: 24 far side .. 1 home)
  Enter / undo         after your move: end your turn, or take the move back
  roll / double        before your roll (Enter = roll; asked only when the cube is alive for you)
  take / pass          when bgbot doubles
  resign [gammon|backgammon]   on your turn: offer bgbot a single game (or a gammon, a backgammon)
  save [FILE]          on your turn: save the match so far (bgbot play --resume FILE goes on)
  hint                 bgbot's analysis of your decision (match winning chances in a match)
  board                show the board again
  quit                 leave the session"""

HUMAN, BOT = 0, 1


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


RESIGN_WORDS = {"": 1, "single": 1, "s": 1, "normal": 1, "n": 1, "1": 1, "gammon": 2, "g": 2, "2": 2,
                "backgammon": 3, "b": 3, "bg": 3, "3": 3}
END_TURN = ("", "y", "yes", "ok", "done", "d", "roll", "r", "end")


def accepts_resignation(bot: BgbotBot, pos: Position, state: MatchState, level: int) -> bool:
    """Whether ``bot`` accepts the resignation of ``level`` (1-3) by the side on roll in ``pos`` (its view).

    As gnubg's players judge one: the bot accepts when the points offered are
    at least what it expects from playing on, from its cubeless probabilities
    of the position (the resigner on roll, before rolling): in a money game
    its cubeless equity against ``level``; in a match its match winning
    chance at the score against the one of winning ``level x cube`` points.
    """
    w, wg, wbg, lg, lbg = (float(x) for x in bot.engine.evaluate(pos, bot.cube_ply))  # the resigner's view
    # the bot's results and their probabilities: +k = the bot wins k (x cube), -k = it loses k
    outcomes = {1: 1.0 - w - lg, 2: lg - lbg, 3: lbg, -1: w - wg, -2: wg - wbg, -3: wbg}
    if not state.match_length:
        playing_on = sum(k * p for k, p in outcomes.items())
        return level >= playing_on - 1e-9
    met = bot.engine.met
    me, them = 1 - state.on_roll, state.on_roll
    away_me, away_them = state.away(me), state.away(them)
    post = not state.crawford and 1 in (away_me, away_them)
    flags = {"crawford": state.crawford, "post_crawford": post}
    cube = state.cube_value
    playing_on = sum(p * met.mwc_after(away_me, away_them, k * cube, **flags) for k, p in outcomes.items())
    return met.mwc_after(away_me, away_them, level * cube, **flags) >= playing_on - 1e-9


class HumanBot(BaseBot):
    """The person at the terminal, as a :class:`~bgbot.play.bots.Bot`.

    ``ask(prompt)`` returns the next answer line, or None at the end of the
    input; ``say(text)`` prints.  ``engine`` answers ``hint`` and judges a
    resignation.  ``on_save(file or None)`` saves the match so far and
    returns the path written; ``on_new_game(state)`` is told of each new game.
    """

    name = "you"

    def __init__(
        self,
        engine: BgbotBot,
        ask: Callable[[str], str | None],
        say: Callable[[str], None],
        *,
        on_save: Callable[[str | None], str] | None = None,
        on_new_game: Callable[[MatchState], None] | None = None,
    ) -> None:
        self.engine = engine
        self.ask_line = ask
        self.say = say
        self.on_save = on_save
        self.on_new_game = on_new_game
        self._shown: Position | None = None  # the board already shown this turn (at the cube question)

    # ---- helpers ------------------------------------------------------
    def _read(self, prompt: str) -> str:
        line = self.ask_line(prompt)
        if line is None:
            self.say("(end of input)")
            raise QuitSession("end of input")
        text = line.strip()
        if text.lower() in ("quit", "exit", "q"):
            raise QuitSession("quit")
        return text

    def show(self, pos: Position, state: MatchState) -> None:
        """The board with the human at the bottom (``pos`` is the human's view)."""
        self.say(render_board(pos, state).rstrip("\n"))

    def _turn_command(self, text: str, pos: Position, state: MatchState) -> bool:
        """``resign ...`` and ``save ...`` on the human's turn (``pos`` its view); True when ``text`` was one.

        An accepted resignation raises :class:`~bgbot.play.table.Resignation`.
        """
        words = text.split(maxsplit=1)
        head = words[0].lower() if words else ""
        rest = words[1].strip() if len(words) > 1 else ""
        if head == "resign":
            level = RESIGN_WORDS.get(rest.lower())
            if level is None:
                self.say(f"Resign what? 'resign', 'resign gammon' or 'resign backgammon', not {rest!r}.")
                return True
            what = RESIGN_NAMES[level - 1]
            points = level * state.cube_value
            if accepts_resignation(self.engine, pos, state.at_decision(dice=None), level):
                self.say(f"You resign {what}; bgbot accepts and wins {_plural(points, 'point')}.")
                raise Resignation(level)
            self.say(f"You offer {what} ({_plural(points, 'point')}); bgbot declines: it expects more by playing on.")
            return True
        if head == "save":
            if self.on_save is None:
                self.say("This session is not saved (--no-save): nothing written.")
                return True
            try:
                path = self.on_save(rest or None)
            except BgbotError as exc:
                self.say(f"Not saved: {exc}")
                return True
            self.say(f"Saved to {path}; 'bgbot play --resume {path}' goes on from the start of this turn.")
            return True
        return False

    # ---- the Bot protocol ---------------------------------------------
    def new_game(self, state: MatchState) -> None:
        """Tells the session a game starts (so that ``save`` writes it from its first action)."""
        if self.on_new_game is not None:
            self.on_new_game(state)

    def move(self, pos: Position, dice: Dice, state: MatchState) -> Position:
        """Read a move until it is a legal play of ``dice`` the human keeps; returns the result (bgbot's view)."""
        if self._shown == pos:
            self.say(f"You roll {dice[0]}{dice[1]}.")
        else:
            self.show(pos, state)
        self._shown = None
        while True:
            text = self._read(f"Your move ({dice[0]}{dice[1]}): ")
            low = text.lower()
            if low in ("hint", "h"):
                analysis = self.engine.engine.best_move(pos, dice, self.engine.ply, state)
                self.say(analysis.table(limit=8))
            elif low in ("board", "b"):
                self.show(pos, state)
            elif low in ("help", "?"):
                self.say(HELP)
            elif self._turn_command(text, pos, state):
                continue
            else:
                try:
                    mv = parse_move(pos, dice, text)
                except InvalidMoveError as exc:
                    self.say(f"Not played: {exc}. Try again ('hint' shows bgbot's best plays).")
                    continue
                if self._keep(mv.text, mv.result, state):
                    return mv.result
                self.say("Move taken back.")
                self.show(pos, state)

    def _keep(self, text: str, result: Position, state: MatchState) -> bool:
        """Show the move made and ask to end the turn (True) or ``undo`` it (False)."""
        self.show(result.swap(), state.at_decision(dice=None))
        while True:
            low = self._read(f"You play {text}. End your turn [Enter] or undo? ").lower()
            if low in END_TURN:
                return True
            if low in ("undo", "u"):
                return False
            if low in ("board", "b"):
                self.show(result.swap(), state.at_decision(dice=None))
            else:
                self.say(f"Please press Enter to end your turn or answer 'undo' (or board, quit), not {low!r}.")

    def _cube_hint(self, pos: Position, state: MatchState) -> str:
        d = self.engine.decision(pos, state)
        text = f"bgbot's view ({self.engine.cube_ply}-ply): {describe_action(d, state.cube_owner_relative())}"
        if d.mwc_no_double is not None:  # a match: the match winning chances of the side on roll
            parts = [f"no double {100 * d.mwc_no_double:.1f}%"]
            if d.mwc_double_take is not None and d.mwc_double_pass is not None:
                parts += [f"double/take {100 * d.mwc_double_take:.1f}%", f"double/pass {100 * d.mwc_double_pass:.1f}%"]
            text += f"; MWC of the doubler: {', '.join(parts)}"
        else:
            parts = [f"no double {d.equity_no_double:+.3f}"]
            if d.equity_double_take is not None and d.equity_double_pass is not None:
                parts += [f"double/take {d.equity_double_take:+.3f}", f"double/pass {d.equity_double_pass:+.3f}"]
            text += f"; equity of the doubler: {', '.join(parts)}"
        return text

    def double(self, pos: Position, state: MatchState) -> bool:
        """Ask ``roll`` or ``double`` before the human's roll (only asked while the cube is alive for it)."""
        self.show(pos, state)
        self._shown = pos
        while True:
            text = self._read(f"Roll or double (cube {state.cube_value} -> {2 * state.cube_value})? [roll] ")
            low = text.lower()
            if low in ("", "r", "roll"):
                return False
            if low in ("d", "double", "redouble"):
                return True
            if low in ("hint", "h"):
                self.say(self._cube_hint(pos, state))
            elif low in ("board", "b"):
                self.show(pos, state)
            elif low in ("help", "?"):
                self.say(HELP)
            elif not self._turn_command(text, pos, state):
                self.say(f"Please answer 'roll' or 'double' (or hint, board, resign, save, quit), not {low!r}.")

    def take(self, pos: Position, state: MatchState) -> bool:
        """Ask ``take`` or ``pass`` when bgbot doubles (``pos`` is bgbot's view)."""
        view = state.at_decision(HUMAN)
        self.show(pos.swap(), view)
        doubler = state.at_decision()
        while True:
            low = self._read(f"bgbot doubles to {2 * state.cube_value}. Take or pass? ").lower()
            if low in ("t", "take"):
                return True
            if low in ("p", "pass", "drop", "d"):
                return False
            if low in ("hint", "h"):
                self.say(self._cube_hint(pos, doubler).replace("bgbot's view", "bgbot's view of its double"))
            elif low in ("board", "b"):
                self.show(pos.swap(), view)
            else:
                self.say(f"Please answer 'take' or 'pass' (or hint, board, quit), not {low!r}.")


def _narrate(say: Callable[[str], None]) -> Callable[[RecordEntry, MatchState], None]:
    """An observer that tells what happened: bgbot's actions, and the moves made for the human."""
    def observe(action: RecordEntry, _state: MatchState) -> None:
        who = "bgbot" if action.player == BOT else "You"
        if action.kind == "double" and action.player == BOT:
            return  # the take question says it
        if action.kind in ("double", "take", "drop"):
            verb = {"double": "double", "take": "take", "drop": "pass"}[action.kind]
            if action.player == BOT:
                verb += "s"
            extra = f" (cube now {action.cube})" if action.kind == "take" else ""
            say(f"{who} {verb}{extra}.")
            return
        assert action.dice is not None and action.result is not None  # a move
        d = f"{action.dice[0]}{action.dice[1]}"
        moves = legal_moves(action.position, action.dice)
        if len(moves) == 1 and not moves[0].steps:
            say(f"{who} {'roll' if who == 'You' else 'rolls'} {d} and cannot move.")
        elif action.player == BOT or len(moves) == 1:
            text = next(m.text for m in moves if m.result == action.result)
            forced = " (forced)" if action.player == HUMAN else ""
            say(f"{who} {'roll' if who == 'You' else 'rolls'} {d} and {'play' if who == 'You' else 'plays'} "
                f"{text}{forced}.")

    return observe


def _result_line(res: GameResult) -> str:
    if res.winner is None:
        return "The game was stopped (turn limit)."
    who = "You win" if res.winner == HUMAN else "bgbot wins"
    how = {1: "", 2: " (gammon)", 3: " (backgammon)"}.get(res.kind, "")
    if res.how == "dropped":
        how = " (double passed)"
    elif res.how == "resigned":
        how = " (resignation)"
    return f"{who} {_plural(res.points, 'point')}{how}."


@dataclass(frozen=True)
class _InProgress:
    """The game being played, as a record sees it (no result yet)."""

    actions: tuple[RecordEntry, ...]
    crawford: bool
    winner: None = None
    points: int = 0
    how: str = "unfinished"


@dataclass(frozen=True)
class Resumed:
    """Where a saved session goes on: the finished games, the score, and the game in progress.

    Players are those of the record: you are player 0.  ``first_game`` is
    the 0-based number of the game in progress; ``resume`` where it goes on
    (None: it starts afresh); ``seed`` the dice seed the file keeps (None
    when it keeps none).
    """

    match_length: int
    games: tuple[PlayedGame, ...]
    score: tuple[int, int]
    crawford_played: bool
    first_game: int
    resume: Resume | None
    seed: int | None
    jacoby: bool


SEED_TAG = "Seed"  # the .mat header field ``; [Seed "N"]`` and the SGF game comment ``GC[bgbot seed N]``


def resume_point(record: MatchRecord) -> Resumed:
    """The saved session ``record`` (you are player 0) ready to go on; :class:`RecordError` when it cannot.

    Every game but the last must be finished; the last one, unfinished, goes
    on from the start of the turn in progress (after its last move, or the
    take of a double made before the roll).
    """
    games = list(record.games)
    where = record.source or "the record"
    if record.winner is not None:
        raise RecordError(f"{where!r}: the match is over ({record.score[0]}-{record.score[1]}): nothing to resume")
    for g in games[:-1]:
        if g.how == "unfinished":
            raise RecordError(f"{where!r}: game {g.number} is unfinished but not the last one: cannot resume")
    last = games[-1] if games and games[-1].how == "unfinished" else None
    finished = tuple(games[:-1] if last is not None else games)
    score = [0, 0]
    for g in finished:
        if g.winner is not None:
            score[g.winner] += g.points
    resume = None
    if last is not None and last.moves:
        if last.actions[-1].kind == "double":
            raise RecordError(f"{where!r}: game {last.number} ends on a double not yet answered: cannot resume")
        final = last.moves[-1]
        assert final.result is not None  # a move entry has a result
        cube, owner = 1, -1
        for a in last.actions:
            if a.kind == "take":
                cube, owner = a.cube, a.player
        resume = Resume(final.result, 1 - final.player, len(last.moves), cube, owner, last.actions)
    seed = None
    for key, value in record.tags:
        text = value.strip()
        if key == SEED_TAG and text.isdigit():
            seed = int(text)
        elif key == "GC" and text.startswith("bgbot seed ") and text[11:].strip().isdigit():
            seed = int(text[11:].strip())
    return Resumed(
        match_length=record.length,
        games=finished,
        score=(score[0], score[1]),
        crawford_played=any(g.crawford for g in finished),
        first_game=len(finished),
        resume=resume,
        seed=seed,
        jacoby=record.jacoby,
    )


def _record_text(games: Sequence[PlayedGame], length: int, jacoby: bool, seed: int, fmt: str) -> str:
    from bgbot.formats.records import format_mat, match_from_games
    from bgbot.formats.sgf import format_sgf

    if fmt == "sgf":
        return format_sgf(match_from_games(games, ("you", "bgbot"), length, jacoby=jacoby),
                          comment=f"bgbot seed {seed}")
    return format_mat(games, ("you", "bgbot"), length, jacoby=None if length else jacoby,
                      comments=(f'[{SEED_TAG} "{seed}"]',))


def play_terminal(
    bot: BgbotBot,
    *,
    match_length: int = 0,
    seed: int | None = None,
    cube: bool = True,
    jacoby: bool = False,
    stdin: IO[str] | None = None,
    stdout: IO[str] | None = None,
    ask: Callable[[str], str | None] | None = None,
    save: str | Path | None = None,
    resume: MatchRecord | None = None,
) -> tuple[int, int]:
    """Play a session at the terminal; returns the final score (you, bgbot).

    Money games go on until you say no (or quit); a match ends when someone
    reaches ``match_length``.  ``ask`` replaces reading lines from ``stdin``
    (for tests driving the session).  ``save``: write the finished games to
    this record (``.mat`` or ``.sgf`` by its suffix; you are player 0) and
    print its path; a game left by ``quit`` is not in it, but the ``save``
    command writes the game in progress too.  ``resume``: a record saved so
    (its match length, score, jacoby rule and dice seed replace the
    arguments) to go on with.
    """
    from bgbot.formats.records import record_format

    out = stdout if stdout is not None else sys.stdout
    inp = stdin if stdin is not None else sys.stdin

    def say(text: str) -> None:
        out.write(text + "\n")
        out.flush()

    def read(prompt: str) -> str | None:
        out.write(prompt)
        out.flush()
        line = inp.readline()
        if not line:
            return None
        if not inp.isatty():
            out.write(line if line.endswith("\n") else line + "\n")  # echo scripted answers into the transcript
        return line

    back = resume_point(resume) if resume is not None else None
    if back is not None:
        match_length, jacoby = back.match_length, back.jacoby
        seed = back.seed if back.seed is not None else seed
    seed = int(np.random.SeedSequence().entropy % 2**32) if seed is None else seed
    prior: list[PlayedGame] = list(back.games) if back is not None else []
    played: list[GameResult] = []
    current: list[RecordEntry] = []
    current_crawford = [False]

    def new_game(state: MatchState) -> None:
        current.clear()
        current_crawford[0] = state.crawford
        if back is not None and back.resume is not None and not played:
            current.extend(back.resume.actions)

    def save_now(name: str | None) -> str:
        target = Path(name) if name else Path(save) if save is not None else None
        if target is None:
            raise RecordError("no file to save to: say 'save FILE' (.mat or .sgf)")
        games: list[PlayedGame] = [*prior, *played, _InProgress(tuple(current), current_crawford[0])]
        text = _record_text(games, match_length, rules.jacoby, seed, record_format(target))
        return str(fileio.write_text_atomic(target, text, parents=True))

    human = HumanBot(bot, ask or read, say, on_save=save_now, on_new_game=new_game)
    bots = (human, bot)
    rules = Rules(cube=cube, jacoby=jacoby and not match_length)
    score = list(back.score) if back is not None else [0, 0]
    say("You are X (bottom; you move from your 24-point to your 1-point); bgbot is O. Type 'help' for help.")
    say(f"Dice seed {seed}.")
    if back is not None:
        say(f"Resuming {resume.source if resume is not None and resume.source else 'the saved session'}: "  # type: ignore[union-attr]
            f"score you {score[0]}, bgbot {score[1]}, game {back.first_game + 1}.")
    observer = _narrate(say)

    def observe(action: RecordEntry, state: MatchState) -> None:
        current.append(action)
        observer(action, state)

    try:
        if match_length:
            say(f"Match to {_plural(match_length, 'point')}.")

            def after(res: GameResult, sc: tuple[int, int]) -> None:
                played.append(res)
                score[0], score[1] = sc
                say(_result_line(res) + f" Score: you {sc[0]}, bgbot {sc[1]} (match to {match_length}).")

            m = play_match(bots, match_length, lambda g: np.random.default_rng([seed, g]), rules,
                           record=True, observer=observe, on_game=after,
                           start_score=(score[0], score[1]), first_game=back.first_game if back else 0,
                           crawford_played=back.crawford_played if back else False,
                           resume=back.resume if back else None)
            if m.winner is not None:
                say("You win the match!" if m.winner == HUMAN else "bgbot wins the match.")
        else:
            game = back.first_game if back is not None else 0
            while True:
                res = play_game(bots, np.random.default_rng([seed, game]), rules, record=True, observer=observe,
                                resume=back.resume if back is not None and not played else None)
                played.append(res)
                if res.winner is not None:
                    score[res.winner] += res.points
                say(_result_line(res) + f" Total: you {score[0]}, bgbot {score[1]}.")
                game += 1
                again = human.ask_line("Another game? [y/n] ")
                if again is None or again.strip().lower() not in ("y", "yes", ""):
                    break
    except QuitSession:
        say("Bye.")
    say(f"Final score: you {score[0]}, bgbot {score[1]}.")
    if save is not None and (played or prior):
        games = [*prior, *played]
        text = _record_text(games, match_length, rules.jacoby, seed, record_format(save))
        say(f"Session saved to {fileio.write_text_atomic(save, text, parents=True)} ('bgbot analyse' grades it).")
    elif save is not None:
        say("No game was finished: nothing saved.")
    return score[0], score[1]

