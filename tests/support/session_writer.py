"""A session writer for the crash tests: adds turns and reduces until it is killed.

Usage: ``python session_writer.py sqlite|postgresql LOCATION SESSION_ID [FIRST]``. It numbers its
turns from FIRST (by default after the ones already stored), prints ``begin N`` before the add of
turn N and ``ack N`` once it returned, and calls ``context()`` after every turn, so a kill may
land inside an add, a reduction or neither. Each add has the idempotency key ``turn-N``, so the
next writer may start again from the turn that was begun but not acknowledged: a retry.
"""

from __future__ import annotations

import sys

from contextwise import ContextSession, SessionStore, SQLAlchemyStore, SQLiteStore

POLICY = {
    "mode": "reduce",
    "trigger_chars": 300,
    "target_input_chars": 200,
    "steps": [
        {
            "id": "trim",
            "kind": "trim",
            "fragment_id": "history",
            "grouping": {"kind": "message"},
            "target_chars": 200,
        }
    ],
}


def turn_number(message: dict[str, str]) -> int:
    """The turn a message belongs to, from its content ``turn N ...``."""
    return int(message["content"].split()[1])


def main() -> None:
    kind, location, session_id = sys.argv[1:4]
    first = int(sys.argv[4]) if len(sys.argv) > 4 else None
    store: SessionStore = SQLiteStore(location) if kind == "sqlite" else SQLAlchemyStore(location)
    session = ContextSession(POLICY, store, session_id)
    seen = [turn_number(m) for m in session.messages()]
    seen += [turn_number(item.message) for item in session.archive()]
    turn = max(seen, default=-1) + 1 if first is None else first
    while True:
        print(f"begin {turn}", flush=True)
        session.add(
            [
                {"role": "user", "content": f"turn {turn} question " + "q" * (turn % 17)},
                {"role": "assistant", "content": f"turn {turn} answer " + "a" * (turn % 23)},
            ],
            idempotency_key=f"turn-{turn}",
        )
        print(f"ack {turn}", flush=True)
        session.context()
        turn += 1


if __name__ == "__main__":
    main()
