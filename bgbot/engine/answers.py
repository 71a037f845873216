"""The JSON answers of ``bgbot move|cube|eval --json`` and of the HTTP API's ``/v1/move|cube|eval``: one schema.

Both front ends build their answers here, so the command line and the server
can never drift apart.  The schema is versioned as :data:`SCHEMA_VERSION`
(documented in ``docs/api.md``); every position is seen from the side on roll
and every probability and equity is that side's, as everywhere in bgbot.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any

from bgbot.engine.api import describe_action, probs_dict
from bgbot.engine.search import rounded_floats
from bgbot.eval.evaluate import equity
from bgbot.rules.matchstate import CubeState, MatchState

if TYPE_CHECKING:
    from bgbot.engine.api import Engine
    from bgbot.engine.cube import CubeDecision
    from bgbot.engine.search import Analysis
    from bgbot.rules.position import Position

SCHEMA_VERSION = 1  # the "/v1" of the HTTP paths; bump it (and add /v2) when a field changes meaning or goes
FLOAT_DIGITS = 6  # decimals kept in JSON answers: the network's float32 outputs carry about 7


def rounded(value: Any, digits: int = FLOAT_DIGITS) -> Any:
    """``value`` with every float in it (nested dicts, lists, tuples) rounded to ``digits`` decimals.

    A float that is not finite becomes None (JSON has no NaN or infinity);
    other values are kept as they are.
    """
    if isinstance(value, float):
        return round(value, digits) if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: rounded(v, digits) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [rounded(v, digits) for v in value]
    return value


def rounded_array(values: Any, digits: int = FLOAT_DIGITS) -> list[Any]:
    """The floats of an array (any shape) rounded as :func:`rounded` rounds each, as nested lists of floats
    (:func:`bgbot.engine.search.rounded_floats`, which the engine's own answers use)."""
    return rounded_floats(values, digits)


def finished(answer: dict[str, Any]) -> dict[str, Any]:
    """A JSON answer as the CLI prints it and the server sends it: ``schema`` first, floats rounded."""
    return {"schema": SCHEMA_VERSION, **rounded(answer)}


def resolve_cube_state(
    state: MatchState | None,
    *,
    cube: object = None,
    owner: object = None,
    match: object = None,
    score: object = None,
    crawford: bool = False,
    jacoby: bool = False,
) -> CubeState:
    """The cube and score of the side on roll: the position's own (XGID, Match ID, FIBS board), then the overrides.

    ``state`` is the :class:`MatchState` that came with the position (or None);
    any override that is not None replaces its field.  A new ``match`` without
    a ``score`` starts the score at 0-0 (the position's score belongs to its
    own match length).  ``crawford`` and ``jacoby`` can only be switched on.
    Bad values raise :class:`~bgbot.errors.InvalidCubeError` or
    :class:`~bgbot.errors.InvalidScoreError` quoting them.
    """
    c, o, m, s, cr, jac = 1, "center", 0, (0, 0), False, False
    if state is not None:
        c, o, m = state.cube_value, state.cube_owner_relative(), state.match_length
        s = (state.score[state.on_roll], state.score[1 - state.on_roll])
        cr, jac = state.crawford, state.jacoby and state.is_money
    if match is not None and score is None:
        s = (0, 0)  # a new match length makes the position's score meaningless
    return CubeState(
        c if cube is None else cube,  # type: ignore[arg-type]
        o if owner is None else owner,  # type: ignore[arg-type]
        m if match is None else match,  # type: ignore[arg-type]
        s if score is None else score,  # type: ignore[arg-type]
        cr or bool(crawford),
        jac or bool(jacoby),
    )


def move_answer(engine: Engine, analysis: Analysis) -> dict[str, Any]:
    """The ``move`` answer: the engine, the position's IDs, dice, ply and every legal play ranked (mover's view)."""
    # the same dict as finished({"engine": ..., **analysis.to_dict()}), rounded as it is built (it is most
    # of what a 1-ply answer costs: ~20 moves of 8 floats each)
    return {"schema": SCHEMA_VERSION, "engine": rounded(engine.describe()), **analysis.to_dict(FLOAT_DIGITS)}


def eval_answer(engine: Engine, pos: Position, ply: int, probs: Any) -> dict[str, Any]:
    """The ``eval`` answer: the cubeless probabilities and equity of the side on roll in ``pos``, before it rolls."""
    return finished({
        "engine": engine.describe(),
        "position": pos.gnubg_id(),
        "ply": ply,
        "probs": probs_dict(probs),
        "equity": float(equity(probs)),
    })


def cube_answer(
    engine: Engine, pos: Position, ply: int, cs: CubeState, probs: Any, x: float, decision: CubeDecision
) -> dict[str, Any]:
    """The ``cube`` answer: the side on roll's cube decision in ``pos`` with ``cs`` (equities per cube value)."""
    return finished({
        "engine": engine.describe(),
        "position": pos.gnubg_id(),
        "ply": ply,
        "cube": {"value": cs.cube, "owner": cs.owner},
        "match": cs.match,
        "score": list(cs.score),
        "crawford": cs.crawford,
        "jacoby": cs.jacoby,
        "x": x,
        "probs": probs_dict(probs),
        "cubeless_equity": float(equity(probs)),
        "decision_text": describe_action(decision, cs.owner),
        **dataclasses.asdict(decision),
    })


def analyse_cube(engine: Engine, pos: Position, cs: CubeState, ply: int) -> dict[str, Any]:
    """Evaluate ``pos`` (side on roll's view) at ``ply`` and build its :func:`cube_answer`."""
    probs = engine.evaluate(pos, ply)
    x = engine.cube_efficiency(pos)
    d = engine.cube_action(pos, cs, ply=ply)  # its own lookahead above 1-ply; probs and x are shown
    return cube_answer(engine, pos, ply, cs, probs, x, d)
