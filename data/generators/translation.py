"""Toy English-Chinese translation pairs from a small synchronous grammar.

Writes `translation/en-zh/{train,validation,test}.tsv` ("english<TAB>chinese",
no header) and the card `translation/README.md`. Seed 3301.
"""

from .common import LICENSE, SPLITS, generate_splits, write_text


# English:  SUBJ [often] VERB OBJ [PLACE] [TIME]
# Chinese:  SUBJ [TIME] [经常] [PLACE] VERB OBJ
# Negated:  SUBJ do/does not VERB OBJ [PLACE]  ->  SUBJ 不 [PLACE] VERB OBJ

TR_SUBJECTS = [
    # english, chinese, third person singular?
    ("i", "我", False), ("you", "你", False), ("we", "我们", False),
    ("they", "他们", False), ("he", "他", True), ("she", "她", True),
    ("my friend", "我的朋友", True), ("my brother", "我的哥哥", True),
    ("the teacher", "老师", True), ("the students", "学生们", False),
    ("the children", "孩子们", False),
]

TR_OBJECTS = {
    "topic": [("natural language processing", "自然语言处理"), ("deep learning", "深度学习"),
              ("machine learning", "机器学习"), ("mathematics", "数学"), ("physics", "物理"),
              ("history", "历史"), ("chinese", "中文"), ("english", "英语"),
              ("music", "音乐"), ("computer science", "计算机科学")],
    "food": [("apples", "苹果"), ("rice", "米饭"), ("noodles", "面条"), ("bread", "面包"),
             ("fish", "鱼"), ("dumplings", "饺子"), ("eggs", "鸡蛋")],
    "drink": [("tea", "茶"), ("coffee", "咖啡"), ("milk", "牛奶"), ("water", "水"),
              ("juice", "果汁")],
    "thing": [("books", "书"), ("flowers", "花"), ("pens", "笔"), ("computers", "电脑")],
    "reading": [("books", "书"), ("the newspaper", "报纸"), ("novels", "小说")],
}

TR_VERBS = [
    # base, third person singular, chinese, object classes, takes adverbials?
    ("love", "loves", "爱", ("topic", "food", "drink"), False),
    ("like", "likes", "喜欢", ("topic", "food", "drink", "thing"), False),
    ("study", "studies", "学习", ("topic",), True),
    ("teach", "teaches", "教", ("topic",), True),
    ("eat", "eats", "吃", ("food",), True),
    ("drink", "drinks", "喝", ("drink",), True),
    ("buy", "buys", "买", ("food", "drink", "thing"), True),
    ("read", "reads", "读", ("reading",), True),
    ("want", "wants", "想要", ("food", "drink", "thing"), False),
    ("need", "needs", "需要", ("thing", "drink"), False),
    ("cook", "cooks", "做", ("food",), True),
]

TR_TIMES = [("every day", "每天"), ("every morning", "每天早上"),
            ("every evening", "每天晚上"), ("on weekends", "周末"), ("at night", "晚上"),
            ("sometimes", "有时候")]
TR_PLACES = [("at home", "在家"), ("at school", "在学校"), ("in the library", "在图书馆"),
             ("in the park", "在公园"), ("in beijing", "在北京"), ("in shanghai", "在上海"),
             ("at work", "在公司")]


def make_translation(rng, split, index):
    s_en, s_zh, third = rng.choice(TR_SUBJECTS)
    base, third_form, v_zh, classes, adverbials = rng.choice(TR_VERBS)
    if base == "teach" and s_en in ("the children", "the students"):
        return None
    o_en, o_zh = rng.choice(TR_OBJECTS[rng.choice(classes)])
    negated = rng.random() < 0.2
    time = place = often = None
    if adverbials:
        r = rng.random()
        if r < 0.25:
            time = rng.choice(TR_TIMES)
        elif r < 0.45:
            place = rng.choice(TR_PLACES)
        elif r < 0.6:
            time, place = rng.choice(TR_TIMES), rng.choice(TR_PLACES)
        plain_time = time is None or time[0] in ("on weekends", "at night")
        if not negated and rng.random() < 0.15 and plain_time:
            often = True
    if negated:
        time = often = None
        en = [s_en, "does not" if third else "do not", base, o_en]
        zh = [s_zh, "不", place[1] if place else "", v_zh, o_zh]
    else:
        en = [s_en, "often" if often else "", third_form if third else base, o_en]
        zh = [s_zh, time[1] if time else "", "经常" if often else "",
              place[1] if place else "", v_zh, o_zh]
    if place:
        en.append(place[0])
    if time:
        en.append(time[0])
    english = " ".join(w for w in en if w)
    chinese = "".join(zh)
    if not 3 <= len(english.split()) <= 10:
        return None
    return english, (english, chinese)


TRANSLATION_SIZES = {"train": 3000, "validation": 300, "test": 300}


def build_translation():
    anchors = [("i love natural language processing",
                ("i love natural language processing", "我爱自然语言处理")),
               ("i love deep learning", ("i love deep learning", "我爱深度学习"))]
    splits = generate_splits(make_translation, TRANSLATION_SIZES, 3301, anchors)
    en_vocab = {w for en, _ in splits["train"] for w in en.split()}
    zh_vocab = {c for _, zh in splits["train"] for c in zh}
    for split in ("validation", "test"):
        for en, zh in splits[split]:
            missing = [w for w in en.split() if w not in en_vocab]
            missing += [c for c in zh if c not in zh_vocab]
            if missing:
                raise AssertionError(f"{split} pair uses words not in train: {missing}")
    for split, rows in splits.items():
        write_text(f"translation/en-zh/{split}.tsv",
                   "".join(f"{en}\t{zh}\n" for en, zh in rows))
    stats = {}
    for split, rows in splits.items():
        en_len = [len(en.split()) for en, _ in rows]
        zh_len = [len(zh) for _, zh in rows]
        stats[split] = {"pairs": len(rows), "en_min": min(en_len), "en_max": max(en_len),
                        "en_mean": sum(en_len) / len(rows), "zh_min": min(zh_len),
                        "zh_max": max(zh_len), "zh_mean": sum(zh_len) / len(rows)}
    stats["en_vocab"] = len(en_vocab)
    stats["zh_vocab"] = len(zh_vocab)
    write_translation_readme(stats)
    return stats


def write_translation_readme(stats):
    lines = [
        "# Toy English-Chinese translation data",
        "",
        "Sentence pairs from a small synchronous grammar written for elman",
        "(`data/make_toy_data.py`): subject + verb + object with an optional place and",
        "time adverbial or a negation, each English word or phrase mapped to one Chinese",
        "phrase. Chinese moves the time and place before the verb:",
        "",
        "    i eat noodles at home every day        我每天在家吃面条",
        "    he does not drink coffee at work       他不在公司喝咖啡",
        "    i love natural language processing     我爱自然语言处理",
        "",
        "## Format",
        "",
        "`en-zh/{train,validation,test}.tsv`: UTF-8, LF, no header, one pair per line,",
        "`english<TAB>chinese`. English is lower-case words separated by single spaces,",
        "with no punctuation; Chinese has no spaces and no punctuation.",
        "",
        "## Sizes",
        "",
        "| split | pairs | English words min / mean / max | Chinese characters min / mean / max |",
        "|---|---|---|---|",
    ]
    for split in SPLITS:
        s = stats[split]
        lines.append(f"| {split} | {s['pairs']} | {s['en_min']} / {s['en_mean']:.1f} / "
                     f"{s['en_max']} | {s['zh_min']} / {s['zh_mean']:.1f} / {s['zh_max']} |")
    lines += [
        "",
        f"Vocabulary of `train`: {stats['en_vocab']} English words, {stats['zh_vocab']}",
        "Chinese characters. Every word and character of `validation` and `test` occurs",
        "in `train`, but no pair does: `validation` and `test` are new combinations of",
        "known words in the same templates (checked when the files are written), so a",
        "small GRU encoder-decoder can reach a high exact-match score. The pair",
        "`i love natural language processing` / `我爱自然语言处理` is in `train`.",
        "",
        "## How it was made",
        "",
        "`python3 data/make_toy_data.py` (standard library only, fixed seeds) rewrites",
        "every file byte for byte.",
        "",
        f"License: {LICENSE}.",
        "",
    ]
    write_text("translation/README.md", "\n".join(lines))
