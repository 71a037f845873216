"""Chouette: one player in the box against a team led by a captain (rule book, "Chouette (3+ players)").

Built on the same pieces as :mod:`bgbot.cubegame` (opening roll, dice,
:func:`bgbot.game.referee_move`, :func:`bgbot.game.game_points`, and
cubegame's referee, which times the bots and turns their faults into
forfeits).  Every die of a session comes from the one
``numpy.random.Generator`` handed to :func:`play_chouette`; bots never see it.

**Who is who.**  Every bot sees an ordinary two-player money game: the box
is absolute player 0 and the whole team player 1 of the
:class:`~bgbot.matchstate.MatchState` it gets; positions are, as everywhere,
from the view of the side on roll.

**One game** (:func:`play_chouette_game`):

* Checker play of the team is decided by *majority consultation*: every team
  member still in the game proposes a move (checked by the referee); the
  result proposed by most members is played.  A tie goes to the proposal made
  first in team order, i.e. the captain's whenever the captain's proposal is
  among the tied ones (the captain decides).  A move with one legal result
  (or none) is played without asking anyone.
* The team doubles only when **every** member still in the game wants to
  (asked in team order; the first "no" ends the question).  If the box
  passes, it pays the current stake to every member still in the game.
* When the box doubles, each member takes or passes on its own; a passer pays
  the current stake (the cube before the double) to the box and leaves the
  game.  The members who take play on at the doubled cube, which they own
  together: a redouble by the team needs the unanimity of those left.  If the
  captain passes, the next member left in team order moves for the team.
* At the end the box settles separately with every member still in the game:
  ``cube x 1/2/3`` (``Rules.backgammon_counts``; under the Jacoby rule
  gammons count single while the cube is centred, automatic doubles do not
  turn it).
* Faults (an illegal move, garbage, a dead engine: see :mod:`bgbot.cubegame`)
  forfeit ``cube x backgammon_counts``: a faulty member pays the box that and
  leaves the game (the others play on); a faulty box pays it to every member
  still in the game and the game ends.

**Rotation** (:func:`rotate`) follows the box's result against the game's
captain (the one who started the game as captain): if the box beat the
captain (a captain who passed the box's double or forfeited has lost), the
box stays and the captain goes to the end of the queue; if the captain won,
the captain goes into the box and the old box to the end of the queue.  An
unfinished game (``Rules.max_turns``) pays nothing and changes nothing.

**Initial order** (:func:`initial_order`): everybody rolls one die, in seat
order; higher dice come first (box, captain, then the queue); players with
equal dice roll again among themselves only, to order their group.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from bgbot.bots.base import Bot
from bgbot.cubegame import MAX_CUBE, DecisionTimes, Fault, Rules
from bgbot.cubegame import Forfeit as _CubegameForfeit  # the referee's "this bot forfeits" signal
from bgbot.cubegame import Referee as _CubegameReferee  # asks, times, catches BgbotError
from bgbot.errors import ConfigError, IllegalMoveError, InvalidPositionError
from bgbot.game import Dice, game_points, opening_roll, referee_move, roll_dice
from bgbot.matchstate import MatchState
from bgbot.movegen import successors
from bgbot.position import Position

__all__ = [
    "BOX",
    "MIN_PLAYERS",
    "TEAM",
    "ChouetteAction",
    "ChouetteGameResult",
    "ChouetteLogEntry",
    "ChouetteResult",
    "Settlement",
    "initial_order",
    "play_chouette",
    "play_chouette_game",
    "rotate",
]

BOX, TEAM = 0, 1  # the absolute players of every MatchState a chouette bot is shown
MIN_PLAYERS = 3
DEFAULT_RULES = Rules()  # money play with the cube, no Jacoby, no automatic doubles

GameHow = Literal["played", "dropped", "passed", "forfeit", "unfinished"]
SettlementHow = Literal["played", "dropped", "passed", "forfeit", "unfinished"]


@dataclass(frozen=True)
class Settlement:
    """How one team member came out of a game against the box.

    ``member`` is the index in the team (0 = the captain).  ``points`` is
    what the member won from the box (negative: paid to the box).  ``how``:
    ``'played'`` (the game was played out), ``'dropped'`` (the box passed the
    team's double), ``'passed'`` (the member passed the box's double),
    ``'forfeit'`` (the member's fault, or the box's) or ``'unfinished'``.
    """

    member: int
    points: int
    how: SettlementHow


@dataclass(frozen=True)
class ChouetteAction:
    """One entry of a chouette game record.

    ``member`` is None for the box, else the team member's index (0 = the
    captain).  For a team move it is the member whose proposal was played
    (the first in team order to propose it) and ``votes`` is how many members
    proposed it (0 when the move was forced and nobody was asked).
    ``position`` is from the view of the side on roll (the mover, or the
    doubler for ``double``/``take``/``pass``); a move's ``result`` is from the
    opponent's view.  ``cube`` is the cube after the action (for ``double``
    the value offered).
    """

    member: int | None
    kind: Literal["move", "double", "take", "pass"]
    position: Position
    dice: Dice | None = None
    result: Position | None = None
    cube: int = 1
    votes: int = 0


@dataclass(frozen=True)
class ChouetteGameResult:
    """The outcome of :func:`play_chouette_game`.

    ``how`` is how the game ended: ``'played'`` (borne off), ``'dropped'``
    (the box passed the team's double), ``'passed'`` (every member left by
    passing the box's doubles), ``'forfeit'`` (the box's fault, or the last
    member left by a fault) or ``'unfinished'``.  ``winner`` is the side that
    won at the end (``'box'`` when no member was left), None if unfinished.
    ``kind`` is 1/2/3 for a game played out, else 0.  ``cube`` and
    ``cube_owner`` (-1 centred, :data:`BOX` or :data:`TEAM`) are the final
    cube.  ``settlements`` has one entry per team member, in team order.
    ``faults`` name the referee's index: 0 for the box, ``1 + i`` for team
    member ``i``; so do ``times``.  ``consulted`` counts team moves on which
    more than one member was asked, ``overruled`` those on which the move
    played was not the acting captain's proposal.
    """

    how: GameHow
    winner: Literal["box", "team"] | None
    kind: int
    cube: int
    cube_owner: int
    turns: int
    first_player: int
    opening_dice: Dice
    opening_ties: int
    settlements: tuple[Settlement, ...]
    faults: tuple[Fault, ...]
    actions: tuple[ChouetteAction, ...]
    times: tuple[DecisionTimes, ...]
    box_doubles: int
    team_doubles: int
    consulted: int
    overruled: int

    @property
    def box_points(self) -> int:
        """What the box won in total (minus what it paid): the opposite of the members' sum."""
        return -sum(s.points for s in self.settlements)

    @property
    def box_beat_captain(self) -> bool | None:
        """Whether the box won against the game's captain (rotation follows it); None if unfinished."""
        captain = self.settlements[0]
        if captain.how == "unfinished":
            return None
        return captain.points < 0


class _SeatReferee(_CubegameReferee):
    """cubegame's referee over the box (index 0) and every team member (``1 + i``), with a timer each."""

    def __init__(self, bots: Sequence[Bot]) -> None:
        super().__init__(bots)
        self.times = tuple(DecisionTimes() for _ in bots)  # type: ignore[assignment]


class _Proposer:
    """A bot seen as a :class:`bgbot.game.Player`, so that :func:`referee_move` checks its answer."""

    def __init__(self, ref: _SeatReferee, index: int, state: MatchState) -> None:
        self.ref, self.index, self.state = ref, index, state

    def move(self, pos: Position, dice: Dice) -> Position:
        return self.ref.ask(self.index, "move", pos, dice, self.state)  # type: ignore[return-value]


def _checked_move(ref: _SeatReferee, index: int, pos: Position, dice: Dice, state: MatchState) -> Position:
    """The checked move of referee index ``index`` (opponent's view); raises the referee's forfeit on a fault."""
    try:
        return referee_move(_Proposer(ref, index, state), pos, dice, who=ref.bots[index].name)
    except IllegalMoveError as exc:
        raise ref.fault(index, "move", pos, dice, str(exc)) from None


def play_chouette_game(
    box: Bot,
    team: Sequence[Bot],
    rng: np.random.Generator,
    rules: Rules = DEFAULT_RULES,
    *,
    record: bool = True,
    start: Position | None = None,
) -> ChouetteGameResult:
    """Play one money game of ``box`` against ``team`` (the captain first, then the queue).

    See the module docstring for consultation, the cube and settlement.  The
    box is player 0 and the team player 1 of the opening roll; ``start``
    (default the starting position) is seen from the winner of the opening
    roll.  ``Rules.crawford`` does not apply (no matches).  Faults of bots
    forfeit as described; nothing is raised for them.
    """
    if not team:
        raise ConfigError("a chouette game needs at least one team member, got none")
    if start is not None and (not isinstance(start, Position) or start.is_game_over()):
        raise InvalidPositionError(f"start must be a Position of a game not yet over, got {start!r}")
    ref = _SeatReferee([box, *team])
    first, opening, ties = opening_roll(rng)
    cube = 2 ** min(ties, rules.auto_doubles) if rules.cube else 1
    owner = -1
    active = list(range(len(team)))  # members still in the game, in team order
    settled: dict[int, Settlement] = {}
    faults: list[Fault] = []
    actions: list[ChouetteAction] = []
    stats = {"box_doubles": 0, "team_doubles": 0, "consulted": 0, "overruled": 0}
    last_exit: list[SettlementHow] = []

    def state(on_roll: int, *, dice: Dice | None = None, doubled: bool = False) -> MatchState:
        return MatchState(
            cube_value=cube, cube_owner=owner, on_roll=on_roll, doubled=doubled, dice=dice, jacoby=rules.jacoby
        )

    def note(action: ChouetteAction) -> None:
        if record:
            actions.append(action)

    def leave(member: int, points: int, how: SettlementHow) -> None:
        settled[member] = Settlement(member, points, how)
        active.remove(member)
        last_exit.append(how)

    def member_forfeits(member: int, fault: Fault) -> None:
        faults.append(fault)
        leave(member, -cube * rules.backgammon_counts, "forfeit")

    def ask_member(member: int, what: Literal["double", "take"], pos: Position, st: MatchState) -> bool | None:
        """The member's answer, or None when it forfeited (and has left the game)."""
        try:
            return bool(ref.ask(1 + member, what, pos, None, st))
        except _CubegameForfeit as exc:
            member_forfeits(member, exc.fault)
            return None

    def consult(pos: Position, dice: Dice, st: MatchState) -> tuple[int, Position, int] | None:
        """(proposer, result, votes) of the team's move, or None when every member forfeited."""
        proposals: list[tuple[int, Position]] = []
        for member in list(active):
            try:
                proposals.append((member, _checked_move(ref, 1 + member, pos, dice, st)))
            except _CubegameForfeit as exc:
                member_forfeits(member, exc.fault)
        if not proposals:
            return None
        votes = Counter(result for _, result in proposals)
        best = max(votes.values())
        # the first proposal in team order among the most voted: the acting captain's wins every tie it is in
        proposer, result = next((m, r) for m, r in proposals if votes[r] == best)
        if len(proposals) > 1:
            stats["consulted"] += 1
            if result != proposals[0][1]:
                stats["overruled"] += 1
        return proposer, result, votes[result]

    def finish(how: GameHow, winner: Literal["box", "team"] | None, kind: int, turns: int) -> ChouetteGameResult:
        return ChouetteGameResult(
            how=how,
            winner=winner,
            kind=kind,
            cube=cube,
            cube_owner=owner,
            turns=turns,
            first_player=first,
            opening_dice=opening,
            opening_ties=ties,
            settlements=tuple(settled[m] for m in range(len(team))),
            faults=tuple(faults),
            actions=tuple(actions),
            times=ref.times,
            **stats,
        )

    def everybody_left(turns: int) -> ChouetteGameResult:
        how: GameHow = "forfeit" if last_exit[-1] == "forfeit" else "passed"
        return finish(how, "box", 0, turns)

    for bot in (box, *team):
        bot.new_game(state(first))
    pos = Position.start() if start is None else start
    side = first
    dice: Dice = opening
    turn = 0
    try:
        for turn in range(1, rules.max_turns + 1):
            if turn > 1:
                if rules.cube and owner in (-1, side) and cube < MAX_CUBE:
                    if side == BOX:
                        if ref.ask(0, "double", pos, None, state(BOX)):
                            stats["box_doubles"] += 1
                            note(ChouetteAction(None, "double", pos, cube=2 * cube))
                            for member in list(active):
                                answer = ask_member(member, "take", pos, state(BOX, doubled=True))
                                if answer:
                                    note(ChouetteAction(member, "take", pos, cube=2 * cube))
                                elif answer is not None:
                                    leave(member, -cube, "passed")
                                    note(ChouetteAction(member, "pass", pos, cube=cube))
                            if not active:
                                return everybody_left(turn - 1)
                            cube, owner = 2 * cube, TEAM
                    else:
                        unanimous = True
                        for member in list(active):
                            answer = ask_member(member, "double", pos, state(TEAM))
                            if answer is False:
                                unanimous = False
                                break
                        if not active:
                            return everybody_left(turn - 1)
                        if unanimous:
                            stats["team_doubles"] += 1
                            note(ChouetteAction(active[0], "double", pos, cube=2 * cube))
                            if not ref.ask(0, "take", pos, None, state(TEAM, doubled=True)):
                                note(ChouetteAction(None, "pass", pos, cube=cube))
                                for member in list(active):
                                    leave(member, cube, "dropped")
                                return finish("dropped", "team", 0, turn - 1)
                            cube, owner = 2 * cube, BOX
                            note(ChouetteAction(None, "take", pos, cube=cube))
                dice = roll_dice(rng)
            legal = successors(pos, dice)
            mover: int | None = None if side == BOX else active[0]
            votes = 0
            if not legal:
                result = pos.swap()
            elif len(legal) == 1:
                result = legal[0]
            elif side == BOX:
                result = _checked_move(ref, 0, pos, dice, state(BOX, dice=dice))
            else:
                decided = consult(pos, dice, state(TEAM, dice=dice))
                if decided is None:
                    return everybody_left(turn - 1)
                mover, result, votes = decided
            note(ChouetteAction(mover, "move", pos, dice, result, cube, votes))
            if result.off()[1] == 15:  # the mover, now the opponent in ``result``, is off
                kind = -result.result()
                points = game_points(
                    kind, cube, backgammon_counts=rules.backgammon_counts, jacoby=rules.jacoby,
                    cube_turned=owner != -1,
                )
                for member in list(active):
                    leave(member, points if side == TEAM else -points, "played")
                return finish("played", "team" if side == TEAM else "box", kind, turn)
            pos, side = result, 1 - side
    except _CubegameForfeit as exc:  # only the box's faults get here: members' are settled where they happen
        faults.append(exc.fault)
        for member in list(active):
            leave(member, cube * rules.backgammon_counts, "forfeit")
        return finish("forfeit", "team", 0, turn)
    for member in list(active):
        leave(member, 0, "unfinished")
    return finish("unfinished", None, 0, rules.max_turns)


# ---------------------------------------------------------------------------
# a session: order, rotation, totals
# ---------------------------------------------------------------------------


Roll = tuple[tuple[int, int], ...]  # one round of single dice: (seat, die) in seat order


def initial_order(players: int, rng: np.random.Generator) -> tuple[tuple[int, ...], tuple[Roll, ...]]:
    """The starting order of ``players`` seats (0-based) and every round of dice rolled to find it.

    The order is box, captain, then the queue.  Each seat rolls one die (in
    seat order, from ``rng``); higher comes first; seats with equal dice roll
    again among themselves only (groups resolved from the highest down) to
    order their group.
    """
    if isinstance(players, bool) or not isinstance(players, int) or players < 1:
        raise ConfigError(f"players must be a positive integer, got {players!r}")
    rounds: list[Roll] = []

    def rank(seats: list[int]) -> list[int]:
        dice = [int(d) for d in rng.integers(1, 7, size=len(seats))]
        rounds.append(tuple(zip(seats, dice, strict=True)))
        out: list[int] = []
        for face in sorted(set(dice), reverse=True):
            group = [s for s, d in zip(seats, dice, strict=True) if d == face]
            out.extend(group if len(group) == 1 else rank(group))
        return out

    return tuple(rank(list(range(players)))), tuple(rounds)


def rotate(order: Sequence[int], box_won: bool) -> tuple[int, ...]:
    """The order after a game; ``order`` is box, captain, then the queue (seats).

    ``box_won`` (the box beat the captain): the box stays, the captain goes
    to the end of the queue and the next in line becomes captain.  Otherwise
    the captain goes into the box and the old box to the end of the queue.
    """
    if len(order) < 2:
        raise ConfigError(f"an order needs a box and a captain, got {tuple(order)!r}")
    box, captain, *queue = order
    return (box, *queue, captain) if box_won else (captain, *queue, box)


@dataclass(frozen=True)
class ChouetteLogEntry:
    """One game of a session: ``number`` (1-based), the ``order`` it was played in (seats: box, captain,
    queue), its ``result``, the ``points`` each seat won in it (summing to zero) and the ``next_order``."""

    number: int
    order: tuple[int, ...]
    result: ChouetteGameResult
    points: tuple[int, ...]
    next_order: tuple[int, ...]

    @property
    def box(self) -> int:
        """The seat in the box."""
        return self.order[0]

    @property
    def captain(self) -> int:
        """The seat that captained the team."""
        return self.order[1]


@dataclass(frozen=True)
class ChouetteResult:
    """A session of :func:`play_chouette`; everything is indexed by seat (the order of the bots given).

    ``points``: each seat's total (they sum to zero); ``box_games``: games
    each seat played in the box; ``initial_order`` and ``initial_rolls`` (see
    :func:`initial_order`); ``final_order``: the order for the next game;
    ``games``: the log; ``times``: each seat's decisions and their time.
    """

    names: tuple[str, ...]
    points: tuple[int, ...]
    box_games: tuple[int, ...]
    initial_order: tuple[int, ...]
    initial_rolls: tuple[Roll, ...]
    final_order: tuple[int, ...]
    games: tuple[ChouetteLogEntry, ...]
    times: tuple[DecisionTimes, ...]

    def describe_order(self, order: Sequence[int]) -> str:
        """``box A, captain B, then C, D`` with the seats' names."""
        names = [self.names[s] for s in order]
        rest = f", then {', '.join(names[2:])}" if len(names) > 2 else ""
        return f"box {names[0]}, captain {names[1]}{rest}"

    def format(self) -> str:
        """A text report: per-seat totals and box games, and the initial and final orders."""
        width = max(6, *(len(n) for n in self.names))
        lines = [
            f"chouette: {len(self.names)} players, {len(self.games)} game{'s' if len(self.games) != 1 else ''}",
            f"initial order: {self.describe_order(self.initial_order)}",
            f"{'seat':>4}  {'player':<{width}}  {'points':>7}  {'box games':>9}  {'ms/decision':>11}",
        ]
        for seat, name in enumerate(self.names):
            lines.append(
                f"{seat + 1:>4}  {name:<{width}}  {self.points[seat]:>+7d}  {self.box_games[seat]:>9d}"
                f"  {self.times[seat].mean_ms:>11.2f}"
            )
        unfinished = sum(1 for g in self.games if g.result.how == "unfinished")
        faults = [f for g in self.games for f in g.result.faults]
        if unfinished:
            lines.append(f"unfinished games: {unfinished}")
        lines.extend(f"fault in game: {f.describe()}" for f in faults)
        lines.append(f"final order: {self.describe_order(self.final_order)}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """The session as plain JSON data (seats 0-based; the game log without the moves)."""
        return {
            "players": [
                {"seat": s, "name": n, "points": self.points[s], "box_games": self.box_games[s],
                 "decisions": self.times[s].total, "mean_ms": round(self.times[s].mean_ms, 3)}
                for s, n in enumerate(self.names)
            ],
            "initial_order": list(self.initial_order),
            "initial_rolls": [[list(r) for r in rnd] for rnd in self.initial_rolls],
            "final_order": list(self.final_order),
            "games": [
                {
                    "number": g.number,
                    "order": list(g.order),
                    "how": g.result.how,
                    "winner": g.result.winner,
                    "kind": g.result.kind,
                    "cube": g.result.cube,
                    "turns": g.result.turns,
                    "points": list(g.points),
                    "settlements": [
                        {"seat": g.order[1 + s.member], "points": s.points, "how": s.how}
                        for s in g.result.settlements
                    ],
                    "faults": [f.describe() for f in g.result.faults],
                    "consulted": g.result.consulted,
                    "overruled": g.result.overruled,
                }
                for g in self.games
            ],
        }


def play_chouette(
    bots: Sequence[Bot],
    games: int,
    rng: np.random.Generator,
    rules: Rules = DEFAULT_RULES,
    *,
    record: bool = False,
    on_game: Callable[[ChouetteLogEntry], None] | None = None,
) -> ChouetteResult:
    """Play ``games`` chouette games among ``bots`` (3 or more; seat ``i`` is ``bots[i]``).

    The initial order is rolled from ``rng``, then every game's dice come
    from it too: the same seed and bots give the same session.  After each
    game the order rotates (:func:`rotate`); ``on_game(entry)`` is called
    with each game's log entry.  A bot whose engine failed in a game is
    reset before the next one (an :class:`~bgbot.errors.EngineError` from
    the reset ends the session by propagating).  ``record`` keeps every
    action in the log.
    """
    if len(bots) < MIN_PLAYERS:
        raise ConfigError(f"a chouette needs at least {MIN_PLAYERS} players, got {len(bots)}")
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ConfigError(f"games must be a positive integer, got {games!r}")
    n = len(bots)
    order, rolls = initial_order(n, rng)
    start_order = order
    totals = [0] * n
    box_games = [0] * n
    times = [DecisionTimes() for _ in range(n)]
    log: list[ChouetteLogEntry] = []
    for number in range(1, games + 1):
        res = play_chouette_game(bots[order[0]], [bots[s] for s in order[1:]], rng, rules, record=record)
        points = [0] * n
        points[order[0]] = res.box_points
        for s in res.settlements:
            points[order[1 + s.member]] = s.points
        for seat in range(n):
            totals[seat] += points[seat]
        box_games[order[0]] += 1
        for index, seat in enumerate(order):
            times[seat].add(res.times[index])
        beat = res.box_beat_captain
        next_order = order if beat is None else rotate(order, beat)
        entry = ChouetteLogEntry(number, order, res, tuple(points), next_order)
        log.append(entry)
        if on_game is not None:
            on_game(entry)
        for fault in res.faults:
            # a dead or silent engine restarts; a wrong answer leaves the conversation in step
            if fault.engine_failed:
                bots[order[fault.player]].reset()
        order = next_order
    return ChouetteResult(
        names=tuple(b.name for b in bots),
        points=tuple(totals),
        box_games=tuple(box_games),
        initial_order=start_order,
        initial_rolls=rolls,
        final_order=order,
        games=tuple(log),
        times=tuple(times),
    )
