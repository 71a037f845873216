"""Terminal play: a scripted person against bgbot (tiny fresh network), through stdin and the CLI."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from bgbot.engine.api import Engine
from bgbot.eval.evaluate import NetEvaluator
from bgbot.eval.nets import ModelSpec, ValueNet, save_checkpoint
from bgbot.formats.ids import parse_xgid
from bgbot.play.bots.local import BgbotBot
from bgbot.play.terminal import play_terminal
from bgbot.rules.dice import opening_roll
from bgbot.rules.moves import legal_moves
from bgbot.rules.position import Position

REPO = Path(__file__).resolve().parents[1]


def _net() -> ValueNet:
    torch.manual_seed(2)
    return ValueNet(ModelSpec(hidden=(8,)))


@pytest.fixture(scope="module")
def bot() -> BgbotBot:
    return BgbotBot(Engine(NetEvaluator(_net()), bearoff=False), ply=1)


def _seed_where_you_start() -> tuple[int, tuple[int, int]]:
    for s in range(100):
        first, dice, _ = opening_roll(np.random.default_rng([s, 0]))
        if first == 0:
            return s, dice
    raise AssertionError("no seed")


def test_scripted_stdin_bad_text_is_explained_and_asked_again(bot: BgbotBot) -> None:
    seed, dice = _seed_where_you_start()
    legal = legal_moves(Position.start(), dice)
    good = legal[0].text
    script = "\n".join(["hello", "24/1", "hint", "board", "help", good, "quit"]) + "\n"
    out = io.StringIO()
    score = play_terminal(bot, seed=seed, stdin=io.StringIO(script), stdout=out)
    text = out.getvalue()
    assert score == (0, 0)
    prompt = f"Your move ({dice[0]}{dice[1]}): "
    assert text.count(prompt) == 6  # asked again after each bad answer and command
    assert "Not played:" in text and "'hello'" in text and "'24/1'" in text
    assert "4HPwATDgc/ABMA" in text  # the error names the position
    # hint: the engine's ranked plays, best first, as its analysis gives them
    ranked = [c.move for c in bot.engine.best_move(Position.start(), dice, 1).candidates[:8]]
    hint = text[text.index("equity"):]
    assert [hint.index(m) for m in ranked] == sorted(hint.index(m) for m in ranked)
    assert "Answers:" in text
    assert "Bye." in text and "Final score: you 0, bgbot 0." in text


def test_end_of_input_ends_the_session_cleanly(bot: BgbotBot) -> None:
    out = io.StringIO()
    assert play_terminal(bot, seed=3, stdin=io.StringIO(""), stdout=out) == (0, 0)
    assert "(end of input)" in out.getvalue() and "Bye." in out.getvalue()


class _Player:
    """Reads the screen like a person: the last XGID shown and the dice in the prompt."""

    def __init__(self, out: io.StringIO, seed: int) -> None:
        self.out = out
        self.rng = np.random.default_rng(seed)
        self.asked = {"move": 0, "cube": 0, "take": 0, "bad": 0}

    def __call__(self, prompt: str) -> str:
        self.out.write(prompt + "\n")
        screen = self.out.getvalue()
        if prompt.startswith("Your move"):
            self.asked["move"] += 1
            m = re.match(r"Your move \((\d)(\d)\)", prompt)
            assert m, prompt
            dice = (int(m.group(1)), int(m.group(2)))
            xgid = re.findall(r"XGID=\S+", screen)[-1]
            pos, _ = parse_xgid(xgid)
            moves = legal_moves(pos, dice)
            assert moves[0].steps, "asked to move without a legal play"
            if self.asked["move"] % 7 == 3:
                self.asked["bad"] += 1
                return "13/1"  # illegal: the game must ask again
            return moves[int(self.rng.integers(len(moves)))].text
        if prompt.startswith("You play") and "End your turn" in prompt:
            self.asked["end"] = self.asked.get("end", 0) + 1
            return ""
        if prompt.startswith("Roll or double"):
            self.asked["cube"] += 1
            return "double" if self.rng.random() < 0.1 else "roll"
        if "Take or pass" in prompt:
            self.asked["take"] += 1
            return "take"
        if prompt.startswith("Another game"):
            return "n"
        raise AssertionError(f"unexpected prompt {prompt!r}")


def test_a_whole_match_against_bgbot_played_from_the_screen(bot: BgbotBot) -> None:
    out = io.StringIO()
    player = _Player(out, 4)
    you, them = play_terminal(bot, match_length=3, seed=21, stdout=out, ask=player)
    text = out.getvalue()
    assert max(you, them) >= 3
    assert ("You win the match!" in text) == (you >= 3) and ("bgbot wins the match." in text) == (them >= 3)
    assert f"Final score: you {you}, bgbot {them}." in text
    assert player.asked["move"] > 10 and player.asked["bad"] > 0
    assert text.count("Not played:") == player.asked["bad"]
    assert re.search(r"bgbot rolls \d\d and plays", text)
    assert "match to 3" in text


def test_money_session_with_the_cube(bot: BgbotBot) -> None:
    out = io.StringIO()
    player = _Player(out, 9)
    you, them = play_terminal(bot, seed=5, stdout=out, ask=player)
    text = out.getvalue()
    assert "Total: you" in text and f"Final score: you {you}, bgbot {them}." in text
    assert (you > 0) != (them > 0)  # one game, one winner
    assert player.asked["cube"] > 0


def test_cli_play_is_driven_by_stdin(tmp_path: Path) -> None:
    ckpt = tmp_path / "tiny.pt"
    save_checkpoint(ckpt, _net())
    seed, dice = _seed_where_you_start()
    good = legal_moves(Position.start(), dice)[0].text
    proc = subprocess.run(
        [sys.executable, "-m", "bgbot.cli", "play", "--checkpoint", str(ckpt), "--seed", str(seed), "--match", "3"],
        input=f"8/1 6/off\n{good}\n\nquit\n", capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.returncode == 0, proc.stderr
    assert "Not played:" in proc.stdout and "'8/1 6/off'" in proc.stdout
    assert re.search(r"bgbot rolls \d\d and (plays|cannot move)", proc.stdout)
    assert "Bye." in proc.stdout and "You are X" in proc.stdout


def test_ambiguous_text_is_explained_and_asked_again(bot: BgbotBot) -> None:
    from bgbot.play.terminal import HumanBot
    from bgbot.rules.matchstate import MatchState
    from bgbot.rules.moves import parse_move

    # blots on the human's 11- and 7-points: 13/5 with 62 hits one of them either way
    pos = Position.from_points({24: 2, 13: 5, 8: 3, 6: 5}, {18: 1, 14: 1, 13: 5, 8: 3, 6: 5})
    answers = iter(["13/5", "13/7*/5", ""])
    said: list[str] = []
    human = HumanBot(bot, lambda prompt: next(answers), said.append)
    result = human.move(pos, (6, 2), MatchState(dice=(6, 2)))
    assert result == parse_move(pos, (6, 2), "13/7*/5").result
    complaint = next(s for s in said if s.startswith("Not played:"))
    assert "'13/5' could mean" in complaint and "13/7*/5" in complaint and "13/11*/5" in complaint
