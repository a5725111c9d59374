"""The toy-data generators, one module per data set, run by `data/make_toy_data.py`.

`sentiment`, `tagging`, `translation` and `lm` each hold their grammar and
lexicons, write their files and their folder's README card; `overview` writes
data/README.md; `common` holds the helpers they share. Standard library only,
fixed seeds.
"""
