#!/usr/bin/env python3
"""Writes elman's toy datasets from small hand-written grammars.

Every sentence in data/ comes from the grammars and lexicons in `data/generators/`
(one module per data set); no text is taken from other projects or public
datasets. The generators use only the standard library and fixed seeds, so
running this script again reproduces every file byte for byte:

    python3 data/make_toy_data.py

Outputs (all UTF-8, LF line endings):

    sentiment/{en,zh}/{train,validation,test}.csv   header "text,label"
    tagging/en/{train,validation,test}.conll        "token TAG", CoNLL-2003 style, IOB2
    tagging/zh/{train,validation,test}.txt          "字 TAG", one character per line
    translation/en-zh/{train,validation,test}.tsv   "english<TAB>chinese", no header
    lm/{en,zh}.txt, lm/{en,zh}_{valid,test}.txt     one paragraph per line

plus a README.md card in each dataset folder and data/README.md.
"""

from generators import lm, overview, sentiment, tagging, translation


def main():
    sentiment.build_sentiment()
    tagging.build_tagging()
    translation.build_translation()
    lm.build_lm()
    overview.write_overview()


if __name__ == "__main__":
    main()
