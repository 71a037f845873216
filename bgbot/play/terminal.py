"""Terminal play: a person against bgbot, money games or a match, with the cube.

``bgbot play [--ply N] [--match N]`` shows an ASCII board (you are X, at the
bottom, moving from your 24-point to your 1-point) and reads your answers
line by line, so it can be driven by a script on stdin as well as by a
person:

* a move in standard notation (``24/18 13/11``, ``bar/22*``, ``6/off``,
  ``8/5(2)``); unreadable, illegal or ambiguous text gets a message saying
  why and the question again;
* before your roll: ``roll`` (or Enter) or ``double``;
* facing a double: ``take`` or ``pass``;
* at any question: ``hint`` (the engine's ranked moves, or its cube
  action), ``board``, ``help``, ``quit``.

The game is refereed by :mod:`bgbot.play.table`, exactly as in a pit.  A move
with a single legal play is made for you (and shown).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO

import numpy as np

from bgbot.engine.api import describe_action
from bgbot.errors import InvalidMoveError, QuitSession
from bgbot.formats.board import render_board
from bgbot.formats.records import RecordEntry
from bgbot.play.bots.base import BaseBot
from bgbot.play.bots.local import BgbotBot
from bgbot.play.match import play_match
from bgbot.play.table import GameResult, Rules, play_game
from bgbot.rules.dice import Dice
from bgbot.rules.matchstate import MatchState
from bgbot.rules.moves import legal_moves, parse_move
from bgbot.rules.position import Position

HELP = """\
Answers:
  a move like 24/18 13/11, bar/22*, 6/off or 8/5(2)   (your points: 24 far side .. 1 home)
  roll / double        before your roll (Enter = roll)
  take / pass          when bgbot doubles
  hint                 bgbot's analysis of your decision
  board                show the board again
  quit                 leave the session"""

HUMAN, BOT = 0, 1


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


class HumanBot(BaseBot):
    """The person at the terminal, as a :class:`~bgbot.play.bots.Bot`.

    ``ask(prompt)`` returns the next answer line, or None at the end of the
    input; ``say(text)`` prints.  ``engine`` answers ``hint``.
    """

    name = "you"

    def __init__(self, engine: BgbotBot, ask: Callable[[str], str | None], say: Callable[[str], None]) -> None:
        self.engine = engine
        self.ask_line = ask
        self.say = say
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

    # ---- the Bot protocol ---------------------------------------------
    def move(self, pos: Position, dice: Dice, state: MatchState) -> Position:
        """Read a move until it is a legal play of ``dice``; returns the result (bgbot's view)."""
        if self._shown == pos:
            self.say(f"You roll {dice[0]}{dice[1]}.")
        else:
            self.show(pos, state)
        self._shown = None
        while True:
            text = self._read(f"Your move ({dice[0]}{dice[1]}): ")
            low = text.lower()
            if low in ("hint", "h"):
                analysis = self.engine.engine.best_move(pos, dice, self.engine.ply)
                self.say(analysis.table(limit=8))
            elif low in ("board", "b"):
                self.show(pos, state)
            elif low in ("help", "?"):
                self.say(HELP)
            else:
                try:
                    return parse_move(pos, dice, text).result
                except InvalidMoveError as exc:
                    self.say(f"Not played: {exc}. Try again ('hint' shows bgbot's best plays).")

    def _cube_hint(self, pos: Position, state: MatchState) -> str:
        d = self.engine.decision(pos, state)
        return f"bgbot's view ({self.engine.cube_ply}-ply): {describe_action(d, state.cube_owner_relative())}"

    def double(self, pos: Position, state: MatchState) -> bool:
        """Ask ``roll`` or ``double`` before the human's roll."""
        self.show(pos, state)
        self._shown = pos
        while True:
            low = self._read(f"Roll or double (cube {state.cube_value} -> {2 * state.cube_value})? [roll] ").lower()
            if low in ("", "r", "roll"):
                return False
            if low in ("d", "double", "redouble"):
                return True
            if low in ("hint", "h"):
                self.say(self._cube_hint(pos, state))
            elif low in ("board", "b"):
                self.show(pos, state)
            else:
                self.say(f"Please answer 'roll' or 'double' (or hint, board, quit), not {low!r}.")

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
    return f"{who} {_plural(res.points, 'point')}{how}."


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
) -> tuple[int, int]:
    """Play a session at the terminal; returns the final score (you, bgbot).

    Money games go on until you say no (or quit); a match ends when someone
    reaches ``match_length``.  ``ask`` replaces reading lines from ``stdin``
    (for tests driving the session).  ``save``: write the finished games to
    this record (``.mat`` or ``.sgf`` by its suffix; you are player 0) and
    print its path; a game left by ``quit`` is not in it.
    """
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

    human = HumanBot(bot, ask or read, say)
    bots = (human, bot)
    rules = Rules(cube=cube, jacoby=jacoby and not match_length)
    seed = int(np.random.SeedSequence().entropy % 2**32) if seed is None else seed
    score = [0, 0]
    say("You are X (bottom; you move from your 24-point to your 1-point); bgbot is O. Type 'help' for help.")
    say(f"Dice seed {seed}.")
    observer = _narrate(say)
    played: list[GameResult] = []
    try:
        if match_length:
            say(f"Match to {_plural(match_length, 'point')}.")

            def after(res: GameResult, sc: tuple[int, int]) -> None:
                played.append(res)
                score[0], score[1] = sc
                say(_result_line(res) + f" Score: you {sc[0]}, bgbot {sc[1]} (match to {match_length}).")

            m = play_match(bots, match_length, lambda g: np.random.default_rng([seed, g]), rules,
                           record=save is not None, observer=observer, on_game=after)
            if m.winner is not None:
                say("You win the match!" if m.winner == HUMAN else "bgbot wins the match.")
        else:
            game = 0
            while True:
                res = play_game(bots, np.random.default_rng([seed, game]), rules, record=save is not None,
                                     observer=observer)
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
    if save is not None and played:
        from bgbot.formats.records import match_from_games, write_match

        record = match_from_games(played, ("you", "bgbot"), match_length, jacoby=rules.jacoby)
        say(f"Session saved to {write_match(save, record)} ('bgbot analyse' grades it).")
    elif save is not None:
        say("No game was finished: nothing saved.")
    return score[0], score[1]
