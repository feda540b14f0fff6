import FimMathlib.Algebra
import FimMathlib.Classic
