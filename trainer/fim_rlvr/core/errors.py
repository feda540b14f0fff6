"""Failures the user can fix, as one family: each layer raises its own kind (a bad config, dataset, prompt option,
model, rollout engine, report target or export), and the run answers any of them the same way, as JSON-RPC error
-32001 on `initialize` whose message says what happened and what to do. Bugs stay ordinary exceptions."""

from __future__ import annotations


class UserError(Exception):
    """A failure the user can fix; the message says what happened and what to do."""


class TrainerError(UserError):
    """The run cannot start as asked (JSON-RPC error -32001 on `initialize`)."""


class ExportError(UserError):
    """An export or a model load the user can act on: what happened (`message`), and what to do about it (`hint`)."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
