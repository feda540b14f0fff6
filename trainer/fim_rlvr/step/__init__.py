"""One RL step as functions of explicit inputs: sample groups, check them (with repair turns), score, the loss and
the optimiser steps, the metrics line; and the SFT warm start. Over core/, tasks/, algorithms/, model/, verifier/;
never the Trainer."""
