"""`elman textbook`: the course texts' worked examples (Cases A–G), recomputed with Keras.

Every case runs through real Keras layers whose weights are set explicitly
(float64): Case A against exact fractions from `data/textbook/derive_expected.py`,
every printed value of the texts compared with the computed one.

Modules: `runner` (`run_textbook`, `record_json`, `run`, `main`), `case_a` (the
red/blue key task), `cases_rnn` (Cases B–E), `cases_training` (Cases F, G),
`oracle` (the exact-arithmetic oracle for Case A), `printed` (the printed values
and their flags), `report` (Markdown and plots), `common` (shared helpers).
Importing this package imports no TensorFlow.
"""
