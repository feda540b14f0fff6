prelude
import FimPrelude.Core
import FimPrelude.Meta
import FimPrelude.Tactics
