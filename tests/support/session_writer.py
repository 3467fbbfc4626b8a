"""A session writer for the crash tests: adds turns and reduces until it is killed.

Usage: ``python session_writer.py sqlite|postgresql LOCATION SESSION_ID``. It numbers its turns
after the ones already stored, prints ``ack N`` once ``add`` returned for turn N, and calls
``context()`` after every turn, so a kill may land inside an add, a reduction or neither.
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
    store: SessionStore = SQLiteStore(location) if kind == "sqlite" else SQLAlchemyStore(location)
    session = ContextSession(POLICY, store, session_id)
    seen = [turn_number(m) for m in session.messages()]
    seen += [turn_number(item.message) for item in session.archive()]
    turn = max(seen, default=-1) + 1
    while True:
        session.add(
            [
                {"role": "user", "content": f"turn {turn} question " + "q" * (turn % 17)},
                {"role": "assistant", "content": f"turn {turn} answer " + "a" * (turn % 23)},
            ]
        )
        print(f"ack {turn}", flush=True)
        session.context()
        turn += 1


if __name__ == "__main__":
    main()
