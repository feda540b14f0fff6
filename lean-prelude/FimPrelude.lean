prelude
import FimPrelude.Core
import FimPrelude.Meta
import FimPrelude.Notation
import FimPrelude.Tactics
import FimPrelude.Logic
import FimPrelude.Nat
import FimPrelude.Simp
import FimPrelude.NatLemmas
import FimPrelude.Pretty
