"""Chouette: one player in the box against a team led by a captain (rule book, "Chouette (3+ players)").

A chouette game is a session on the one turn loop (:func:`bgbot.play.table.play_game`):
the box is one side, the team another (:class:`TeamSide`, which consults its
members, polls their doubles and takes, and settles those who leave).  The
loop's referee times the box and checks its moves; the team's own referee does
the same for each member.  Every die of a session comes from the one
``numpy.random.Generator`` handed to :func:`play_chouette`; bots never see it.

**Who is who.**  Every bot sees an ordinary two-player money game: the box
is absolute player 0 and the whole team player 1 of the
:class:`~bgbot.rules.matchstate.MatchState` it gets; positions are, as everywhere,
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
* Faults (an illegal move, garbage, a dead engine: see :mod:`bgbot.play.table`)
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

from bgbot.errors import ConfigError, Forfeit
from bgbot.formats.records import RecordEntry
from bgbot.play.bots.base import Bot
from bgbot.play.table import DEFAULT_RULES, DecisionTimes, Fault, GameFacts, Referee, Rules, play_game
from bgbot.rules.dice import Dice
from bgbot.rules.matchstate import MatchState
from bgbot.rules.movegen import successors_batch
from bgbot.rules.position import Position

__all__ = [
    "BOX",
    "MIN_PLAYERS",
    "TEAM",
    "ChouetteAction",
    "ChouetteGameResult",
    "ChouetteLogEntry",
    "ChouetteResult",
    "Settlement",
    "TeamSide",
    "initial_order",
    "play_chouette",
    "play_chouette_game",
    "rotate",
]

BOX, TEAM = 0, 1  # the absolute players of every MatchState a chouette bot is shown
MIN_PLAYERS = 3

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
class ChouetteGameResult(GameFacts):
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


class TeamSide:
    """The chouette team as one side of the turn loop: consultation, unanimous doubles, individual takes.

    ``team`` is in team order (the captain first).  Members are asked through
    :attr:`ref`, a referee over ``[box, *team]`` whose index ``1 + i`` is member
    ``i`` (so faults and timings name seats as the chouette does).  A member
    whose answer is a fault pays the box ``cube x backgammon_counts`` and leaves;
    the team itself forfeits only when its last member does.  ``log`` (if not
    None) receives the members' own takes and passes as they happen.
    """

    def __init__(self, box: Bot, team: Sequence[Bot], rules: Rules, log: list[ChouetteAction] | None) -> None:
        self.name = "team"
        self.ref = Referee([box, *team])
        self.rules = rules
        self.log = log
        self.active = list(range(len(team)))  # members still in the game, in team order
        self.settled: dict[int, Settlement] = {}
        self.faults: list[Fault] = []
        self.exits: list[SettlementHow] = []
        self.consulted = 0
        self.overruled = 0
        self.last_move: tuple[int, int] | None = None  # (proposer, votes) of the move just consulted

    # ---- members leaving -------------------------------------------------
    def leave(self, member: int, points: int, how: SettlementHow) -> None:
        """Settle ``member`` (points won from the box) and take it out of the game."""
        self.settled[member] = Settlement(member, points, how)
        self.active.remove(member)
        self.exits.append(how)

    def settle_all(self, points: int, how: SettlementHow) -> None:
        """Settle every member still in the game alike."""
        for member in list(self.active):
            self.leave(member, points, how)

    def _forfeits(self, member: int, fault: Fault, cube: int) -> None:
        self.faults.append(fault)
        self.leave(member, -cube * self.rules.backgammon_counts, "forfeit")

    def _ask(self, member: int, what: Literal["double", "take"], pos: Position, state: MatchState) -> bool | None:
        """The member's answer, or None when it forfeited (and has left the game)."""
        try:
            return bool(self.ref.ask(1 + member, what, pos, None, state))
        except Forfeit as exc:
            self._forfeits(member, exc.fault, state.cube_value)  # type: ignore[arg-type]
            return None

    def _no_one_left(self) -> Forfeit:
        return Forfeit(self.faults[-1])

    # ---- the Bot methods the turn loop calls -----------------------------
    def new_game(self, state: MatchState) -> None:
        """Tell every member a game starts."""
        for member in self.active:
            self.ref.bots[1 + member].new_game(state)

    def reset(self) -> None:
        """Nothing to reset: members are reset by the chouette session."""

    def move(self, pos: Position, dice: Dice, state: MatchState) -> Position:
        """Majority consultation: every member left proposes; the most proposed result is played."""
        legal, _ = successors_batch(pos.array()[None, :], dice, include_pass=False)
        proposals: list[tuple[int, Position]] = []
        for member in list(self.active):
            try:
                proposals.append((member, self.ref.checked_move(1 + member, pos, dice, state, legal)))
            except Forfeit as exc:
                self._forfeits(member, exc.fault, state.cube_value)  # type: ignore[arg-type]
        if not proposals:
            raise self._no_one_left()
        votes = Counter(result for _, result in proposals)
        best = max(votes.values())
        # the first proposal in team order among the most voted: the acting captain's wins every tie it is in
        proposer, result = next((m, r) for m, r in proposals if votes[r] == best)
        if len(proposals) > 1:
            self.consulted += 1
            if result != proposals[0][1]:
                self.overruled += 1
        self.last_move = (proposer, votes[result])
        return result

    def double(self, pos: Position, state: MatchState) -> bool:
        """The team doubles only when every member left wants to (the first "no" ends the question)."""
        for member in list(self.active):
            if self._ask(member, "double", pos, state) is False:
                return False
        if not self.active:
            raise self._no_one_left()
        return True

    def take(self, pos: Position, state: MatchState) -> bool:
        """Each member takes or passes on its own; the team plays on if anyone took."""
        for member in list(self.active):
            answer = self._ask(member, "take", pos, state)
            if answer:
                self._note(ChouetteAction(member, "take", pos, cube=2 * state.cube_value))
            elif answer is not None:
                self.leave(member, -state.cube_value, "passed")
                self._note(ChouetteAction(member, "pass", pos, cube=state.cube_value))
        return bool(self.active)

    def _note(self, action: ChouetteAction) -> None:
        if self.log is not None:
            self.log.append(action)


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
    actions: list[ChouetteAction] = []
    side = TeamSide(box, team, rules, actions if record else None)

    def observe(entry: RecordEntry, _state: MatchState) -> None:
        member: int | None = None
        votes = 0
        if entry.player == TEAM:
            if entry.kind in ("take", "drop"):
                return  # the members' own takes and passes are logged by the team as they answer
            member = side.active[0] if side.active else None
            if entry.kind == "move" and side.last_move is not None:
                member, votes = side.last_move
        side.last_move = None
        kind = "pass" if entry.kind == "drop" else entry.kind
        actions.append(ChouetteAction(member, kind, entry.position, entry.dice, entry.result, entry.cube, votes))

    res = play_game([box, side], rng, rules, record=False, observer=observe if record else None, start=start)
    faults = list(side.faults)
    how: GameHow
    winner: Literal["box", "team"] | None
    if res.how == "unfinished":
        side.settle_all(0, "unfinished")
        how, winner = "unfinished", None
    elif res.winner == TEAM:
        # played out, the box passed, or the box forfeited: every member left is paid alike
        if res.how == "forfeit":
            faults.append(res.fault)  # type: ignore[arg-type]
        side.settle_all(res.points, res.how)  # type: ignore[arg-type]
        how, winner = res.how, "team"
    elif res.how == "played":
        side.settle_all(-res.points, "played")
        how, winner = "played", "box"
    else:
        # nobody is left in the team: the last member passed, or forfeited
        how, winner = ("forfeit" if side.exits[-1] == "forfeit" else "passed"), "box"
    return ChouetteGameResult(
        **res.facts(),  # type: ignore[arg-type]
        how=how,
        winner=winner,
        settlements=tuple(side.settled[m] for m in range(len(team))),
        faults=tuple(faults),
        actions=tuple(actions),
        times=(res.times[BOX], *side.ref.times[1:]),
        box_doubles=res.doubles[BOX],
        team_doubles=res.doubles[TEAM],
        consulted=side.consulted,
        overruled=side.overruled,
    )


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
