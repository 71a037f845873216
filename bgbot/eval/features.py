"""Hand-made expert features: positions ``(N, 26)`` -> ``(N, 2 * NUM_FEATURES)`` float32.

In the spirit of GNU Backgammon's contact-net inputs (written from their public
descriptions, not from its code): race, contact, shot, blockade and timing
measures that a small TD network learns only slowly from raw point counts.

A row holds ``NUM_FEATURES`` features of the side on roll, then the same
features of the opponent, computed on the flipped board, so that
``features(b)[:, F:] == features(flip(b))[:, :F]``.  Every feature is computed
for one side, "me" (the side whose view the board is: positive counts, moving
from 24 towards 1), against the other side, "opp".  Opponent checkers are read
in my numbering: the opponent's point ``q`` is my slot ``25 - q``, it moves
from my slot 1 towards 24, its bar is slot 0 (so it enters with die ``d`` on
my slot ``d``) and it hits my blot on slot ``t`` from slot ``s < t`` by moving
``t - s`` pips.  A point is *made* with 2+ checkers.

The features of one side, in column order (see ``FEATURE_NAMES`` and
``FEATURE_RANGES``; "rear" is my rearmost checker's slot, 25 = bar, 0 = none;
"q" is the opponent's rearmost checker's slot in my numbering, 0 = its bar):

 0 ``pips``           my pip count (bar = 25) / 167 (the start's count), in [0, 375/167]
 1 ``off``            checkers borne off / 15
 2 ``bar``            checkers on my bar, capped at 4, / 4
 3 ``break_contact``  sum over my checkers behind q of ``p - q + 1``, the pips each must
                      travel to be past the opponent's rearmost checker, / 167
                      (167 at the start); 0 once contact is broken; in [0, 390/167]
 4 ``behind``         number of my checkers behind q / 15
 5 ``back_checker``   rear / 25 (where my last checker is: the bar gives 1)
 6 ``back_anchor``    my rearmost made point (1..24) / 24, 0 if none
 7 ``forward_anchor`` my most advanced made point in the opponent's home board
                      (my 19..24): ``(25 - p) / 6``, so the 24-point anchor gives 1/6
                      and the 19 (opponent's 6-point) gives 1; 0 if none
 8 ``anchors``        my made points in the opponent's home board / 6 (2+ anchors: back game)
 9 ``pip_loss``       expected pips I lose to the opponent's next roll: over the 36 rolls,
                      the largest ``25 - t`` among my blots (slot t) that roll can hit,
                      averaged, / 24 (in [0, 1])
10 ``p_hit``          rolls (of 36) that hit at least one of my blots / 36
11 ``p_double_hit``   rolls that can hit two of my blots / 36
12 ``escapes``        rolls with which my rearmost checker can get past the opponent's
                      blockade (see below) / 36; 1 when I have no checkers left
13 ``contain``        the minimum of the same escape count over my points 13..24 (the
                      opponent's side of the board), / 36: how well the opponent's
                      points contain any checker of mine that is (or will be, once hit) there
14 ``primed_points``  opponent's made points in front of rear / 7 (7 is the most 15 checkers make)
15 ``prime_front``    longest run of consecutive opponent made points in front of rear,
                      capped at 6, / 6
16 ``dance``          when I am on the bar, the chance that no checker enters,
                      ``(closed / 6) ** 2`` with ``closed`` the opponent's made home points;
                      0 when I am not on the bar (so it is zero whenever it does not matter)
17 ``opp_closed``     the opponent's made home-board points (my 19..24) / 6
18 ``timing``         pips I can play before I must break my structure: every checker
                      on 7..25 counts ``p - 6`` (the pips to bring it home) except two
                      on each of my anchors in 19..24 (kept), plus each spare on a home
                      point (a blot, or a checker above two) counts ``p - 1``; / 100,
                      in [0, 2.85] (56 at the start)
19 ``spread``         standard deviation of my on-board checkers' points (bar = 25)
                      / 12 (the largest possible), in [0, 1]: the second moment of my
                      pip distribution, high when the game plan is split
20 ``home_points``    my made points in my home board / 6
21 ``blots``          my blots (slots 1..24 holding one checker) / 15
22 ``points``         my made points on 1..24 / 7 (7 is the most 15 checkers make)
23 ``my_prime``       my longest run of consecutive made points, capped at 6, / 6
24 ``stacking``       checkers above three on my points, summed, / 12 (wasted on heavy
                      stacks; 12 = all 15 on one point)

**Shots** (``pip_loss``, ``p_hit``, ``p_double_hit``).  For each of the 21
distinct rolls (non-doubles weigh 2) the opponent's checkers may move by the
dice: a non-double hits my blot directly with either die or with both dice by
one checker when at least one of the two intermediate points is open (not made
by me); a double moves up to four steps with every intermediate point open.
A double hit is two different blots hit in one roll: two dice from two
sources (the same point only if it holds 2+ opponent checkers), or hitting and
continuing with the other die, or for doubles any split of the four steps.
With the opponent on the bar (the simplification documented here): its bar
checkers must enter first.  One on the bar, non-double: it enters with one die
(on an open point; hitting a blot there) and the other die may then hit from
any opponent checker including the one just entered.  Two or more on the bar,
non-double: both dice enter, hitting only blots on the entry points.  Doubles:
if the entry point is made nothing moves, else ``min(bar, 4)`` steps enter and
the remaining steps move as above (from the entered checkers or any other).
The legal-move rules that may forbid a hitting play (both dice must be used,
the higher die when only one can be) are ignored, as gnubg's shot counts do;
checkers are never borne off to reach a blot.  ``pip_loss`` weighs only the
single most costly blot of a roll.  In a race nothing can be hit: all three are 0.

**Escapes** from point ``p``: the *blockade* is the opponent's made points
among the six points in front of ``p`` (the direct reach of one die; a point
further on is no wall yet, and a prime that starts within six points is passed
only by passing all of it since a checker may stop only on open points).  A
roll *escapes* when the checker, moving alone by its dice (either order; up to
four steps for doubles) and stopping only on points the opponent has not
made, reaches a point in front of the blockade's front point.  With no made
point in those six, all 36 rolls escape.  Points more than 12 in front count as
open (only doubles reach them) and the board edge is open: the count depends on
the 12 points in front only and comes from a 4096-entry table built at import.
Behind a full 6-prime it is 0; behind a 5-prime it is 11 (the rolls with a 6).

:func:`fill_features` is the compiled kernel (callable from other numba code,
e.g. an encoder filling part of a wider input row): it writes columns
``col .. col + 2 * NUM_FEATURES - 1`` of every row of ``out`` and nothing else.
It allocates only a few small scratch arrays per call, none per row.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from bgbot.jit import board_dtype, njit

FEATURE_NAMES: tuple[str, ...] = (
    "pips",
    "off",
    "bar",
    "break_contact",
    "behind",
    "back_checker",
    "back_anchor",
    "forward_anchor",
    "anchors",
    "pip_loss",
    "p_hit",
    "p_double_hit",
    "escapes",
    "contain",
    "primed_points",
    "prime_front",
    "dance",
    "opp_closed",
    "timing",
    "spread",
    "home_points",
    "blots",
    "points",
    "my_prime",
    "stacking",
)
NUM_FEATURES = len(FEATURE_NAMES)

# The closed range every feature lies in (for any valid position), in FEATURE_NAMES order.
FEATURE_RANGES: tuple[tuple[float, float], ...] = (
    (0.0, 375 / 167),  # pips: 15 checkers on the bar at most
    (0.0, 1.0),
    (0.0, 1.0),
    (0.0, 390 / 167),  # break_contact: 15 checkers * 26 pips at most
    (0.0, 1.0),
    (0.0, 1.0),
    (0.0, 1.0),
    (0.0, 1.0),
    (0.0, 1.0),
    (0.0, 1.0),
    (0.0, 1.0),
    (0.0, 1.0),
    (0.0, 1.0),
    (0.0, 1.0),
    (0.0, 1.0),
    (0.0, 1.0),
    (0.0, 1.0),
    (0.0, 1.0),
    (0.0, 2.85),  # timing: 15 checkers on the bar, 19 pips each
    (0.0, 1.0),
    (0.0, 1.0),
    (0.0, 1.0),
    (0.0, 1.0),
    (0.0, 1.0),
    (0.0, 1.0),
)

_ESCAPE_WINDOW = 6  # the blockade: opponent's made points among the 6 in front of the checker
_ESCAPE_BITS = 12  # the escape table reads the made points among the 12 in front


def _roll_table() -> NDArray[np.int64]:
    """The 21 distinct rolls as rows ``(high die, low die, weight)``: weight 1 for doubles, 2 otherwise."""
    rows = [(a, b, 1 if a == b else 2) for a in range(1, 7) for b in range(1, a + 1)]
    return np.array(rows, dtype=np.int64)


@njit(cache=True)
def _build_escape_table(rolls: NDArray[np.int64]) -> NDArray[np.int64]:
    """Escapes (of 36) for each mask of made opponent points: bit ``i`` = the point ``i + 1`` pips in front."""
    size = 1 << _ESCAPE_BITS
    table = np.zeros(size, dtype=np.int64)
    for mask in range(size):
        front = 0  # distance of the blockade's front point (0: no blockade)
        for i in range(_ESCAPE_WINDOW):
            if (mask >> i) & 1:
                front = i + 1
        if front == 0:
            table[mask] = 36
            continue
        count = 0
        for r in range(rolls.shape[0]):
            a = rolls[r, 0]
            c = rolls[r, 1]
            escaped = False
            if a == c:
                dist = 0
                for _ in range(4):
                    dist += a
                    if dist <= _ESCAPE_BITS and (mask >> (dist - 1)) & 1:
                        break
                    if dist > front:
                        escaped = True
                        break
            else:
                for order in range(2):
                    x = a if order == 0 else c
                    y = c if order == 0 else a
                    if (mask >> (x - 1)) & 1:
                        continue  # first step lands on a made point
                    if x > front:
                        escaped = True
                        break
                    z = x + y
                    if (z > _ESCAPE_BITS or not (mask >> (z - 1)) & 1) and z > front:
                        escaped = True
                        break
            if escaped:
                count += rolls[r, 2]
        table[mask] = count
    return table


def _lowbit_table() -> NDArray[np.int64]:
    """Index of the lowest set bit of every 13-bit number (0 for 0)."""
    x = np.arange(1 << 13)
    low = x & -x
    table = np.zeros(1 << 13, dtype=np.int64)
    table[1:] = np.log2(low[1:]).round().astype(np.int64)
    return table


_BOARD = board_dtype()  # int8 compiled, int64 interpreted (bgbot.jit)
#: the shipped copy of the escape table (:func:`_build_escape_table`'s output; ``tests/test_features.py`` holds the
#: two equal): building it is instant compiled, a third of a second as plain Python (bgbot.jit)
ESCAPES_FILE = Path(__file__).resolve().parents[1] / "data" / "escapes.npy"


def _escape_table() -> NDArray[np.int64]:
    """The escape table: the shipped copy when it is there and whole, else built."""
    try:
        table = np.load(ESCAPES_FILE, allow_pickle=False)
    except (OSError, ValueError):
        table = None
    if table is None or table.shape != (1 << _ESCAPE_BITS,) or table.dtype != np.uint8:
        return _build_escape_table(_ROLLS)
    return table.astype(np.int64)


_ROLLS = _roll_table()
_ESCAPES = _escape_table()
_LOWBIT = _lowbit_table()


@njit(cache=True, inline="always")
def _low(lowbit: NDArray[np.int64], h: int) -> int:
    """Index of the lowest set bit of a non-zero ``h`` below bit 26."""
    low = h & 0x1FFF
    if low:
        return lowbit[low]
    return 13 + lowbit[h >> 13]


@njit(cache=True)
def _separate_pair(b: NDArray[np.int8], blots: NDArray[np.int64], nbl: int, a: int, d: int) -> bool:
    """Non-double, no opponent on the bar: can die ``a`` and die ``d`` hit two different blots from the board?

    Only asked when each die alone hits some blot and together they hit two; the
    catch is a lone source checker that cannot play both dice from its point.
    """
    for i in range(nbl):
        t1 = blots[i]
        s1 = t1 - a
        if s1 < 1 or b[s1] >= 0:
            continue
        for j in range(nbl):
            t2 = blots[j]
            s2 = t2 - d
            if j != i and s2 >= 1 and b[s2] < 0 and (s1 != s2 or b[s1] <= -2):
                return True
    return False


@njit(cache=True)
def _shots(b: NDArray[np.int8], rolls: NDArray[np.int64], lowbit: NDArray[np.int64], blots: NDArray[np.int64],
           nbl: int, cum: NDArray[np.int64], src: int, opn: int, blt: int) -> tuple[int, int, int]:
    """``(rolls hitting, rolls double-hitting, sum of weight * largest pip loss)`` over the 36 rolls.

    Bit sets over my slots: ``src`` the opponent's checkers on points 1..24,
    ``opn`` the points 1..24 I have not made (where it may stop), ``blt`` my
    blots; ``blots[:nbl]`` lists the blots' slots (for the rare exact pair check),
    ``cum`` is scratch of length 5.
    Moving a checker ``k`` pips is a shift left by ``k``.
    """
    nb_opp = -b[0]
    hit_w = 0
    dbl_w = 0
    loss = 0
    for r in range(rolls.shape[0]):
        a = rolls[r, 0]
        d = rolls[r, 1]
        w = rolls[r, 2]
        hits = 0
        two = False
        if a != d:
            if nb_opp == 0:
                ha = (src << a) & blt
                hd = (src << d) & blt
                both = ((((src << a) & opn) << d) | (((src << d) & opn) << a)) & blt
                hits = ha | hd | both
                if hits & (hits - 1):  # two blots within reach of this roll
                    if ((ha << d) | (hd << a)) & blt:
                        two = True  # hit, then the same checker hits again with the other die
                    elif ha and hd and (ha | hd) & ((ha | hd) - 1):
                        two = _separate_pair(b, blots, nbl, a, d)
            elif nb_opp == 1:
                for order in range(2):
                    e = a if order == 0 else d  # the die that enters
                    m = d if order == 0 else a  # the die left free
                    if b[e] >= 2:
                        continue  # entry point made: this order cannot be played
                    entry = (1 << e) & blt
                    free = (((src | (1 << e)) << m) & blt) & ~entry
                    hits |= entry | free
                    if entry and free:
                        two = True
            else:
                hits = ((1 << a) | (1 << d)) & blt
                two = hits & (hits - 1) != 0
        elif nb_opp == 0 or b[a] <= 1:
            steps = 4
            x = src  # where single checkers can stand after k steps
            done = 0  # blots hit with no step of their own (by an entering checker)
            if nb_opp > 0:
                steps = 4 - min(nb_opp, 4)  # steps left once the bar checkers are in
                x = src | (1 << a)
                done = (1 << a) & blt
            y = done  # ... among them those that have already hit a blot
            cum[0] = done  # cum[k]: blots hit within k steps
            for k in range(1, steps + 1):
                y = ((y | (x & blt)) << a) & opn
                x = (x << a) & opn
                if y & blt:
                    two = True  # hit, then the same checker hits again further on
                cum[k] = cum[k - 1] | (x & blt)
            hits = cum[steps]
            if not two and hits & (hits - 1):
                # two blots whose step counts add up to at most ``steps``, each hit by its own checker
                for i in range(steps // 2 + 1):
                    cj = cum[steps - i]
                    if cum[i] and cj & (cj - 1):
                        two = True
                        break
        if hits:
            hit_w += w
            loss += w * (25 - _low(lowbit, hits))
        if two:
            dbl_w += w
    return hit_w, dbl_w, loss


@njit(cache=True, inline="always")
def _opp_rear(b: NDArray[np.int8]) -> int:
    """The opponent's rearmost checker's slot in my numbering: 0 for its bar, 25 when it has none left."""
    for s in range(25):
        if b[s] < 0:
            return s
    return 25


@njit(cache=True)
def _side(b: NDArray[np.int8], o: NDArray[np.float32], c: int, rolls: NDArray[np.int64],
          esc: NDArray[np.int64], lowbit: NDArray[np.int64], made: NDArray[np.int64], blots: NDArray[np.int64],
          cum: NDArray[np.int64]) -> None:
    """Write the NUM_FEATURES features of "me" (board ``b`` from my view) into ``o[c:]``."""
    src = 0  # bit sets over my slots 1..24: opponent checkers, points I have not made, my blots
    opn = 0
    blt = 0
    n_on = 0
    pips = 0
    sq = 0
    rear = 0
    nbl = 0
    points = 0
    home_points = 0
    anchors = 0
    fwd = 0
    back_anchor = 0
    run = 0
    my_prime = 0
    stacking = 0
    for p in range(1, 25):
        v = b[p]
        made[p] = 1 if v <= -2 else 0
        if v < 0:
            src |= 1 << p
        if v <= 1:
            opn |= 1 << p
        if v > 0:
            n_on += v
            pips += v * p
            sq += v * p * p
            rear = p
            if v == 1:
                blots[nbl] = p
                nbl += 1
                blt |= 1 << p
                run = 0
            else:
                points += 1
                back_anchor = p
                run += 1
                if run > my_prime:
                    my_prime = run
                if p <= 6:
                    home_points += 1
                elif p >= 19:
                    anchors += 1
                    if fwd == 0:
                        fwd = p
                if v > 3:
                    stacking += v - 3
        else:
            run = 0
    bar = b[25]
    if bar > 0:
        n_on += bar
        pips += 25 * bar
        sq += 625 * bar
        rear = 25
    made[0] = 0
    made[25] = 0

    q = _opp_rear(b)
    bc = 0
    behind = 0
    for p in range(q + 1, 26):
        v = b[p]
        if v > 0:
            bc += v * (p - q + 1)
            behind += v

    # escapes: a rolling mask of made opponent points among the 12 in front of p
    mask = 0
    contain = 36
    esc_rear = 36
    for p in range(2, 26):
        mask = ((mask << 1) | made[p - 1]) & 0xFFF
        e = esc[mask]
        if 13 <= p <= 24 and e < contain:
            contain = e
        if p == rear:
            esc_rear = e

    primed = 0
    run = 0
    prime_front = 0
    for x in range(1, rear):
        if made[x]:
            primed += 1
            run += 1
            if run > prime_front:
                prime_front = run
        else:
            run = 0
    closed = 0
    for x in range(19, 25):
        closed += made[x]

    timing = 0
    for p in range(7, 26):
        v = b[p]
        if v > 0:
            f = v
            if 19 <= p <= 24 and v >= 2:
                f -= 2
            timing += f * (p - 6)
    for p in range(2, 7):
        v = b[p]
        if v > 0:
            timing += (v - 2 if v >= 2 else v) * (p - 1)

    spread = 0.0
    if n_on >= 2:
        mean = pips / n_on
        var = sq / n_on - mean * mean
        if var > 0.0:
            spread = math.sqrt(var) / 12.0

    hit_w = 0
    dbl_w = 0
    loss = 0
    if nbl > 0 and q < blots[nbl - 1]:
        hit_w, dbl_w, loss = _shots(b, rolls, lowbit, blots, nbl, cum, src, opn, blt)

    o[c + 0] = pips / 167.0
    o[c + 1] = (15 - n_on) / 15.0
    o[c + 2] = min(bar, 4) / 4.0
    o[c + 3] = bc / 167.0
    o[c + 4] = behind / 15.0
    o[c + 5] = rear / 25.0
    o[c + 6] = back_anchor / 24.0
    o[c + 7] = (25 - fwd) / 6.0 if fwd > 0 else 0.0
    o[c + 8] = anchors / 6.0
    o[c + 9] = loss / (36.0 * 24.0)
    o[c + 10] = hit_w / 36.0
    o[c + 11] = dbl_w / 36.0
    o[c + 12] = esc_rear / 36.0
    o[c + 13] = contain / 36.0
    o[c + 14] = primed / 7.0
    o[c + 15] = min(prime_front, 6) / 6.0
    o[c + 16] = (closed / 6.0) ** 2 if bar > 0 else 0.0
    o[c + 17] = closed / 6.0
    o[c + 18] = timing / 100.0
    o[c + 19] = spread
    o[c + 20] = home_points / 6.0
    o[c + 21] = nbl / 15.0
    o[c + 22] = points / 7.0
    o[c + 23] = min(my_prime, 6) / 6.0
    o[c + 24] = stacking / 12.0


@njit(cache=True)
def _fill(boards: NDArray[np.int8], out: NDArray[np.float32], col: int, rolls: NDArray[np.int64],
          esc: NDArray[np.int64], lowbit: NDArray[np.int64]) -> None:
    made = np.zeros(26, dtype=np.int64)
    blots = np.zeros(16, dtype=np.int64)
    cum = np.zeros(5, dtype=np.int64)
    flipped = np.zeros_like(boards[0])  # boards' own integer type
    for r in range(boards.shape[0]):
        b = boards[r]
        o = out[r]
        _side(b, o, col, rolls, esc, lowbit, made, blots, cum)
        for i in range(26):
            flipped[i] = -b[25 - i]
        _side(flipped, o, col + NUM_FEATURES, rolls, esc, lowbit, made, blots, cum)


@njit(cache=True)
def fill_features(boards: NDArray[np.int8], out: NDArray[np.float32], col: int) -> None:
    """Write the ``2 * NUM_FEATURES`` features of each ``(N, 26)`` int8 board into ``out[:, col:col + 2F]``.

    ``out`` is float32 with ``N`` rows and at least ``col + 2 * NUM_FEATURES``
    columns; the other columns are left as they are.  No checks (compiled hot
    path): :func:`features` is the checked entry point.
    """
    _fill(boards, out, col, _ROLLS, _ESCAPES, _LOWBIT)


def features(boards: NDArray[np.int8], out: NDArray[np.float32] | None = None) -> NDArray[np.float32]:
    """The features of ``(N, 26)`` positions (each from its side on roll's view): ``(N, 2 * NUM_FEATURES)`` float32.

    Columns ``0 .. NUM_FEATURES - 1`` describe the side on roll, the rest the
    opponent (the same features on the flipped board).
    """
    boards = np.ascontiguousarray(boards, dtype=_BOARD)
    if boards.ndim != 2 or boards.shape[1] != 26:
        raise ValueError(f"boards must have shape (N, 26), got {boards.shape}")
    width = 2 * NUM_FEATURES
    if out is None:
        out = np.empty((boards.shape[0], width), dtype=np.float32)
    elif out.shape != (boards.shape[0], width) or out.dtype != np.float32:
        raise ValueError(f"out must be float32 of shape {(boards.shape[0], width)}, got {out.shape}")
    _fill(boards, out, 0, _ROLLS, _ESCAPES, _LOWBIT)
    return out


# ---- encoding version 4: five more features a side ---------------------------------------------------------------

#: Encoding version 4 appends these features of each side (the side on roll's first), written from the public
#: descriptions of gnubg's mobility, backbone, second-entry and back-game inputs, not from its code:
#:
#:  0 ``mobility``      over the six die numbers, the checkers of mine that could move that many pips to a point
#:                      the opponent has not made (from the bar: entering checkers only; bearing off counts as a
#:                      move once all my checkers are home), / 90 (15 checkers x 6 numbers), in [0, 1]
#:  1 ``gap``           the largest run of empty points (of mine) between two of my occupied points or between my
#:                      bar and my rearmost board checker, / 23: how disconnected my army is, in [0, 1]
#:  2 ``enter_two``     with two or more of my checkers on the bar, the chance that a roll does not enter two of
#:                      them, ``1 - (open / 6) ** 2`` with ``open`` the opponent's home points not made; else 0
#:  3 ``back_escapes``  the escape count (as ``escapes``) of every checker of mine behind the opponent's rearmost
#:                      checker, averaged over those checkers, / 36; 1 when none is behind
#:  4 ``backgame``      with two or more anchors in the opponent's home board, my checkers there and on the bar
#:                      / 15; else 0
EXTRA_FEATURE_NAMES: tuple[str, ...] = ("mobility", "gap", "enter_two", "back_escapes", "backgame")
NUM_EXTRA_FEATURES = len(EXTRA_FEATURE_NAMES)
EXTRA_FEATURE_RANGES: tuple[tuple[float, float], ...] = ((0.0, 1.0),) * NUM_EXTRA_FEATURES


@njit(cache=True)
def _extra_side(b: NDArray[np.int8], o: NDArray[np.float32], c: int, esc: NDArray[np.int64]) -> None:
    """Write the NUM_EXTRA_FEATURES features of "me" (board ``b`` from my view) into ``o[c:]``."""
    bar = b[25]
    moves = 0
    if bar > 0:
        for d in range(1, 7):
            if b[25 - d] >= -1:
                moves += bar
    else:
        home = True
        for p in range(7, 25):
            if b[p] > 0:
                home = False
                break
        for p in range(1, 25):
            v = b[p]
            if v <= 0:
                continue
            for d in range(1, 7):
                t = p - d
                if (t >= 1 and b[t] >= -1) or (t < 1 and home):
                    moves += v

    gap = 0
    last = 0  # my last occupied slot seen going down from the bar (0: none yet)
    for p in range(25, 0, -1):
        if b[p] > 0:
            if last > 0 and last - p - 1 > gap:
                gap = last - p - 1
            last = p

    enter_two = 0.0
    if bar >= 2:
        open_ = 0
        for s in range(19, 25):
            if b[s] >= -1:
                open_ += 1
        enter_two = 1.0 - (open_ / 6.0) ** 2

    q = _opp_rear(b)
    mask = 0
    esc_sum = 0
    n_behind = 0
    for p in range(1, 26):
        if p >= 2:
            mask = ((mask << 1) | (1 if b[p - 1] <= -2 else 0)) & 0xFFF
        if p > q and b[p] > 0:
            esc_sum += b[p] * esc[mask]
            n_behind += b[p]

    anchors = 0
    back = bar if bar > 0 else 0
    for p in range(19, 25):
        if b[p] > 0:
            back += b[p]
            if b[p] >= 2:
                anchors += 1

    o[c + 0] = moves / 90.0
    o[c + 1] = gap / 23.0
    o[c + 2] = enter_two
    o[c + 3] = esc_sum / (36.0 * n_behind) if n_behind > 0 else 1.0
    o[c + 4] = back / 15.0 if anchors >= 2 else 0.0


@njit(cache=True)
def _fill_extra(boards: NDArray[np.int8], out: NDArray[np.float32], col: int, esc: NDArray[np.int64]) -> None:
    flipped = np.zeros_like(boards[0])
    for r in range(boards.shape[0]):
        b = boards[r]
        o = out[r]
        _extra_side(b, o, col, esc)
        for i in range(26):
            flipped[i] = -b[25 - i]
        _extra_side(flipped, o, col + NUM_EXTRA_FEATURES, esc)


@njit(cache=True)
def fill_extra_features(boards: NDArray[np.int8], out: NDArray[np.float32], col: int) -> None:
    """Write the ``2 * NUM_EXTRA_FEATURES`` version-4 features of each board into ``out[:, col:col + 2E]``.

    As :func:`fill_features`: the side on roll's block first, then the opponent's (the flipped board); no checks.
    """
    _fill_extra(boards, out, col, _ESCAPES)


def extra_features(boards: NDArray[np.int8]) -> NDArray[np.float32]:
    """The version-4 features of ``(N, 26)`` positions (each from its side on roll's view): ``(N, 2E)`` float32.

    Columns ``0 .. NUM_EXTRA_FEATURES - 1`` describe the side on roll, the rest the opponent.
    """
    boards = np.ascontiguousarray(boards, dtype=_BOARD)
    if boards.ndim != 2 or boards.shape[1] != 26:
        raise ValueError(f"boards must have shape (N, 26), got {boards.shape}")
    out = np.empty((boards.shape[0], 2 * NUM_EXTRA_FEATURES), dtype=np.float32)
    _fill_extra(boards, out, 0, _ESCAPES)
    return out


@njit(cache=True)
def cube_x_rows(
    boards: NDArray[np.int8],
    contact_x: float,
    bearoff_x: float,
    race_base: float,
    race_per_pip: float,
    race_min: float,
    race_max: float,
    out: NDArray[np.float64],
) -> None:
    """gnubg's cube efficiency of each ``(N, 26)`` board (side on roll's view) into ``out``, in one pass a row.

    ``contact_x`` with contact, ``bearoff_x`` when both sides are home, else
    ``race_base + race_per_pip * pips`` (the side on roll's pips) clipped to
    ``[race_min, race_max]`` (also for a finished game):
    :func:`bgbot.engine.cube.cube_efficiencies`' figures, the same float64
    operations.
    """
    for r in range(boards.shape[0]):
        my_back = 0
        opp_back = 25
        any_mine = False
        any_theirs = False
        mine_out = False  # a checker of the side on roll outside its home board (points 7..25)
        theirs_out = False  # an opponent's checker outside its home board (our points 0..18)
        pips = 0
        for i in range(26):
            v = np.int64(boards[r, i])
            if v > 0:
                any_mine = True
                my_back = i
                pips += v * i
                if i >= 7:
                    mine_out = True
            elif v < 0:
                any_theirs = True
                if i < opp_back:
                    opp_back = i
                if i < 19:
                    theirs_out = True
        over = not any_mine or not any_theirs
        if my_back > opp_back and not over:
            out[r] = contact_x
        elif not mine_out and not theirs_out and not over:
            out[r] = bearoff_x
        else:
            out[r] = min(max(race_base + race_per_pip * np.float64(pips), race_min), race_max)
