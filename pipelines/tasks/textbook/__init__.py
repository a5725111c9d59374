"""`elman textbook`: the course texts' worked examples (Cases A–G), recomputed with Keras.

Modules: `runner` (`run_textbook`, `record_json`, `run`, `main`), `case_a` (the
red/blue key task), `oracle` (Case A's exact-arithmetic oracle), `cases_rnn`
(Cases B–E), `cases_training` (Cases F, G), `printed` (the texts' printed values
and their flags), `report` (the Markdown), `plots` (the Case A plot) and
`common` (shared helpers). Importing this package imports no TensorFlow.
"""
