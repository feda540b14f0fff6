import FimExamples.Arith
import FimExamples.Logic
import FimExamples.Induction
import FimExamples.Calc
import FimExamples.Structured
import FimExamples.DecideSimp
import FimExamples.Notation
