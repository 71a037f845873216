"""Request bodies of the ``/v1`` JSON API (answers: :mod:`bgbot.engine.answers`, the CLI's ``--json``).

Every request names a position as text: a gnubg Position ID (optionally
``ID:MatchID``), an XGID or a FIBS ``board:`` line, **seen from the side on
roll**.  The cube and score come from the position text where it carries them
(XGID, Match ID, FIBS board) unless the request's own fields say otherwise,
exactly as the CLI's ``--cube/--owner/--match/--score`` options do.  Unknown
fields are an error (a typo must not be silently ignored), and so are values of
the wrong JSON type.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from bgbot.engine.answers import SCHEMA_VERSION as SCHEMA_VERSION  # one version for the CLI and the API

POSITION_MAX = 400  # characters: a FIBS board line is about 150; anything much longer is not a position
RECORD_MAX = 1_000_000  # characters of a match record for /v1/analyse (a long match's .mat is ~100 kB)

Text = Annotated[StrictStr, Field(max_length=POSITION_MAX)]
Dice = Annotated[StrictStr, Field(max_length=16)] | Annotated[list[StrictInt], Field(min_length=2, max_length=2)]
Score = Annotated[StrictStr, Field(max_length=16)] | Annotated[list[StrictInt], Field(min_length=2, max_length=2)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PositionBody(_Body):
    """A position and the ply to look at it (``ply`` omitted: the server's default)."""

    position: Text = Field(
        description="gnubg Position ID (optionally ID:MatchID), XGID or FIBS board line", examples=["4HPwATDgc/ABMA"]
    )
    ply: StrictInt | None = Field(None, description="1, 2 or 3 (XG numbering: 1 = the network alone)")


class CubeFields(_Body):
    """Cube and score overrides, seen from the side on roll (None: the position's own, else centred money)."""

    cube: StrictInt | None = Field(None, description="cube value (1, 2, 4, ...)")
    owner: Literal["me", "opp", "center"] | None = Field(None, description="cube owner seen from the side on roll")
    match: StrictInt | None = Field(None, description="match length, 0 = money game")
    score: Score | None = Field(None, description="points won so far, side on roll first: '2-4' or [2, 4]")
    crawford: StrictBool = Field(False, description="this is the Crawford game")
    jacoby: StrictBool = Field(False, description="Jacoby rule (money games)")


class MoveBody(PositionBody, CubeFields):
    """``POST /v1/move``: rank every legal play of ``dice`` (the same answer as ``bgbot move --json``)."""

    dice: Dice | None = Field(
        None,
        description="the roll: '31', '3-1', '3/1', '3,1', '3 1' or [3, 1]; optional with an XGID carrying dice",
        examples=["31"],
    )
    cubeless: StrictBool = Field(False, description="rank by cubeless money equity")


class CubeBody(PositionBody, CubeFields):
    """``POST /v1/cube``: the cube decision of the side on roll (as ``bgbot cube --json``)."""


class EvalBody(PositionBody):
    """``POST /v1/eval``: cubeless probabilities of the side on roll (as ``bgbot eval --json``)."""


class ShowBody(_Body):
    """``POST /v1/show``: a position's board (26 signed counts, side on roll), IDs, pips and state.

    Give ``position`` (text) or ``board`` (26 signed counts: 1..24 the side on roll's points, its
    checkers positive; 25 its bar; 0 the opponent's bar, negative), e.g. a board set up by hand.
    """

    position: Text | None = None
    board: Annotated[list[StrictInt], Field(min_length=26, max_length=26)] | None = None


class MovesBody(_Body):
    """``POST /v1/moves``: every legal play of ``dice``, with the board after each (no evaluation)."""

    position: Text
    dice: Dice


class GameCube(_Body):
    """The cube of a money game in the page, seen from the side named by the route (``owner``)."""

    cube: StrictInt = Field(1, description="cube value")
    owner: Literal["me", "opp", "center"] = Field("center", description="cube owner, from the position's side")


class BotBody(GameCube):
    """``POST /v1/play/bot``: bgbot, on roll in ``position`` (its view), may double, else rolls (or uses
    ``dice``) and moves, ranking its plays cubefully with the cube given (owner from bgbot's side)."""

    position: Text
    dice: Dice | None = Field(None, description="the bot's dice; omitted: the server rolls them")
    ply: StrictInt | None = None
    seed: StrictInt | None = Field(None, ge=0, description="seed of the server's roll (repeatable games)")
    may_double: StrictBool = Field(False, description="ask bgbot's cube decision before its roll")


class TakeBody(GameCube):
    """``POST /v1/play/take``: the side on roll in ``position`` (its view, cube owner from its side)
    doubles; bgbot, its opponent, takes or passes."""

    position: Text
    ply: StrictInt | None = None


class AnalyseBody(_Body):
    """``POST /v1/analyse``: grade every decision of a match record (as ``bgbot analyse --json``)."""

    record: Annotated[StrictStr, Field(max_length=RECORD_MAX)] = Field(
        description="the text of a Jellyfish .mat or gnubg .sgf match record"
    )
    format: Literal["mat", "sgf"] | None = Field(
        None, description="the record's format (default: sgf if it starts with '(;')"
    )
    ply: StrictInt | None = None
    mistakes: Annotated[StrictInt, Field(ge=0, le=100)] = Field(5, description="biggest mistakes listed per player")
    luck: StrictBool = Field(True, description="the luck analysis (21 extra 1-ply searches a roll)")


class RolloutBody(PositionBody, CubeFields):
    """``POST /v1/rollout``: roll out the position before its roll, or the top plays of ``dice``
    (the same answer as ``bgbot rollout --json``); ``ply`` is the checker play inside the rollout."""

    dice: Dice | None = Field(None, description="roll out the top plays of this roll; omitted: before the roll")
    trials: Annotated[StrictInt, Field(ge=1)] = Field(144, description="games per line (the server caps it)")
    truncate: Annotated[StrictInt, Field(ge=0, le=1000)] = Field(0, description="plies per trial, 0 = to the end")
    top: Annotated[StrictInt, Field(ge=1, le=10)] = Field(5, description="candidate plays rolled out")
    cubeful: StrictBool = True
    luck: StrictBool = Field(True, description="luck adjustment (variance reduction)")
    seed: Annotated[StrictInt, Field(ge=0)] = 0
