"""A simulated week of question gaps through the cache controller, priced in dollars.

Run: .venv/bin/python bench/cache_ttl_bench.py [--seed N] [--prefix TOKENS]

Model: claude-haiku-4-5 prices from pricing.json, a 30k-token cached prefix (held steady by
compaction), 1.5k tokens appended and written per question, Anthropic's API (both TTLs). Only
the input side is priced: output tokens are the same whatever the cache does. A question reads
the prefix when the cache is alive, else writes it at the TTL's write price; a keep-warm ping
reads it (plus a small uncached trailing turn) and extends it by its TTL.

Strategies: always 5 min; always 1 h; the controller's TTL alone; the controller's TTL plus its
keep-warm decisions (asked at each keep-warm tick, as the keep-warm actor would); and the naive
keep-warm loop of the design (5 min, a ping every 240 s while idle under 30 min).
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable
from dataclasses import dataclass

from live_memory.config import constants
from live_memory.providers import (
    CacheEconomics,
    CacheTtl,
    Usage,
    cache_policy_for,
    cost_usd,
    price_for,
)

__all__ = ["main"]

MODEL = "claude-haiku-4-5"
TAIL = 1500
MIN = 60.0
HOUR = 3600.0
DAY = 24 * HOUR
PRICING = price_for(MODEL)
POLICY = cache_policy_for(constants.PROVIDER_ANTHROPIC, None, MODEL)


# --- question patterns (seconds since Monday 00:00) -------------------------------------------


def coding_block(rng: random.Random, start: float, end: float) -> list[float]:
    """Bursts of 3-8 quick questions, separated by 6-25 min of work and the odd meeting."""
    times: list[float] = []
    at = start + rng.uniform(0, 10 * MIN)
    while at < end:
        for _ in range(rng.randint(3, 8)):
            times.append(at)
            at += rng.uniform(0.5 * MIN, 4 * MIN)
        at += rng.uniform(40 * MIN, 55 * MIN) if rng.random() < 0.15 else rng.uniform(6, 25) * MIN
    return [t for t in times if t < end]


def coding_day(rng: random.Random, day: int) -> list[float]:
    base = day * DAY
    morning = coding_block(rng, base + 9 * HOUR, base + 12.5 * HOUR)
    return morning + coding_block(rng, base + 13.5 * HOUR, base + 18 * HOUR)  # lunch: 1 h


def sparse_day(rng: random.Random, day: int, count: tuple[int, int] = (4, 7)) -> list[float]:
    base = day * DAY
    return sorted(base + rng.uniform(9 * HOUR, 18 * HOUR) for _ in range(rng.randint(*count)))


def drip_day(rng: random.Random, day: int) -> list[float]:
    """A reviewer's day: one question every 10-20 min from 9 to 17."""
    at, times = day * DAY + 9 * HOUR, []
    while at < day * DAY + 17 * HOUR:
        times.append(at)
        at += rng.uniform(10 * MIN, 20 * MIN)
    return times


def coding_week(rng: random.Random) -> list[float]:
    return [t for day in range(5) for t in coding_day(rng, day)]


def sparse_week(rng: random.Random) -> list[float]:
    weekdays = [t for day in range(5) for t in sparse_day(rng, day)]
    return weekdays + [t for day in (5, 6) for t in sparse_day(rng, day, (0, 2))]


def mixed_week(rng: random.Random) -> list[float]:
    times: list[float] = []
    for day in range(5):
        times += coding_day(rng, day) if day in (0, 1, 3) else sparse_day(rng, day)
    saturday = 5 * DAY + 10 * HOUR
    return times + [saturday + i * rng.uniform(1 * MIN, 3 * MIN) for i in range(6)]


def drip_week(rng: random.Random) -> list[float]:
    return [t for day in range(5) for t in drip_day(rng, day)]


PATTERNS: dict[str, Callable[[random.Random], list[float]]] = {
    "coding week (bursts, lunch breaks)": coding_week,
    "sparse week (a few questions a day)": sparse_week,
    "mixed week (3 coding + 2 sparse days)": mixed_week,
    "reviewer week (every 10-20 min)": drip_week,
}


# --- the simulation ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Strategy:
    name: str
    ttl: CacheTtl | None  # None: ask the controller
    keep_warm: str  # "off", "controller" or "naive"


STRATEGIES = (
    Strategy("always 5m", "5m", "off"),
    Strategy("always 1h", "1h", "off"),
    Strategy("controller", None, "off"),
    Strategy("controller+ping", None, "controller"),
    Strategy("5m+naive ping", "5m", "naive"),
)


@dataclass(slots=True)
class Outcome:
    dollars: float = 0.0
    pings: int = 0
    questions_1h: int = 0
    reason: str = ""


class Simulation:
    """One strategy over one week of question times."""

    def __init__(self, strategy: Strategy, prefix: int) -> None:
        self.strategy = strategy
        self.prefix = prefix
        self.economics = CacheEconomics(PRICING, POLICY)
        self.expires = float("-inf")
        self.touched = float("-inf")
        self.outcome = Outcome()

    def run(self, times: list[float]) -> Outcome:
        for index, at in enumerate(times):
            if index:
                self._keep_warm_until(times[index - 1], at)
            self.economics.observe_question(at)
            ttl = self.strategy.ttl or self.economics.decide(at, self.prefix).ttl or "5m"
            warm = at < self.expires
            usage = Usage(
                self.prefix + TAIL,
                0,
                self.prefix if warm else 0,
                TAIL if warm else self.prefix + TAIL,
            )
            self._pay(at, usage, ttl, ping=False)
            self.outcome.questions_1h += ttl == "1h"
        last = self.economics.report()
        self.outcome.reason = str(last["reason"])
        return self.outcome

    def _keep_warm_until(self, asked_at: float, next_question: float) -> None:
        mode = self.strategy.keep_warm
        if mode == "off":
            return
        interval = POLICY.keep_warm_interval_s
        tick = self.touched + interval
        while tick < next_question and tick - asked_at <= POLICY.max_idle_s:
            ttl: CacheTtl = self.strategy.ttl or "5m"
            if mode == "controller":
                decision = self.economics.decide(tick, self.prefix)
                ping, ttl = decision.keep_warm, decision.ttl or "5m"
            else:
                ping = True
            if not ping:
                tick += constants.KEEP_WARM_TICK_S
                continue
            overhead = constants.KEEP_WARM_PING_OVERHEAD_TOKENS
            warm = tick < self.expires
            usage = Usage(
                self.prefix + overhead,
                1,
                self.prefix if warm else 0,
                0 if warm else self.prefix,
            )
            self._pay(tick, usage, ttl, ping=True)
            tick += interval

    def _pay(self, at: float, usage: Usage, ttl: CacheTtl, *, ping: bool) -> None:
        self.outcome.dollars += cost_usd(usage, PRICING, cache_ttl=ttl)
        self.outcome.pings += ping
        self.economics.observe_usage(at, usage, ttl, ping=ping)
        self.touched = at
        lifetime = constants.CACHE_TTL_1H_S if ttl == "1h" else constants.CACHE_TTL_5M_S
        self.expires = at + lifetime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--prefix", type=int, default=30_000, help="cached prefix, tokens")
    args = parser.parse_args()

    print(f"{MODEL}, prefix {args.prefix:,} tokens, tail {TAIL:,} tokens, seed {args.seed}")
    print(f"prices checked: pricing.json; USD per MTok {PRICING}\n")
    header = f"{'pattern':40} {'questions':>9} " + " ".join(f"{s.name:>15}" for s in STRATEGIES)
    print(header)
    print("-" * len(header))
    totals = [0.0] * len(STRATEGIES)
    notes: list[str] = []
    for name, pattern in PATTERNS.items():
        times = sorted(pattern(random.Random(args.seed)))
        outcomes = [Simulation(s, args.prefix).run(times) for s in STRATEGIES]
        cells = " ".join(f"${o.dollars:14.3f}" for o in outcomes)
        print(f"{name:40} {len(times):9d} {cells}")
        for index, outcome in enumerate(outcomes):
            totals[index] += outcome.dollars
        ttl_only, with_pings, naive = outcomes[2], outcomes[3], outcomes[4]
        notes.append(
            f"{name}: controller chose 1h for {ttl_only.questions_1h}/{len(times)} questions; "
            f"controller+ping sent {with_pings.pings} pings (naive: {naive.pings}).\n"
            f"    last reason: {with_pings.reason}"
        )
    print("-" * len(header))
    print(f"{'all four weeks':40} {'':9} " + " ".join(f"${t:14.3f}" for t in totals))
    five, hour, controller, pinged = totals[0], totals[1], totals[2], totals[3]
    print(
        f"\ncontroller saves ${five - controller:.3f} ({(five - controller) / five:.0%}) vs "
        f"always-5m and ${hour - controller:.3f} ({(hour - controller) / hour:.0%}) vs always-1h;"
        f" with its keep-warm ${five - pinged:.3f} ({(five - pinged) / five:.0%}) vs always-5m.\n"
    )
    for note in notes:
        print(note)


if __name__ == "__main__":
    main()
