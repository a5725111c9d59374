#!/usr/bin/env python3
"""Writes elman's toy datasets from small hand-written grammars.

Every sentence in data/ comes from the grammars and lexicons in this file; no
text is taken from other projects or public datasets. The script uses only the
standard library and fixed seeds, so running it again reproduces every file
byte for byte:

    python3 data/make_toy_data.py

Outputs (all UTF-8, LF line endings):

    sentiment/{en,zh}/{train,validation,test}.csv   header "text,label"
    tagging/en/{train,validation,test}.conll        "token TAG", CoNLL-2003 style, IOB2
    tagging/zh/{train,validation,test}.txt          "字 TAG", one character per line
    translation/en-zh/{train,validation,test}.tsv   "english<TAB>chinese", no header
    lm/{en,zh}.txt, lm/{en,zh}_{valid,test}.txt     one paragraph per line

plus a README.md card in each dataset folder and data/README.md.
"""

import csv
import hashlib
import io
import random
import re
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent
LICENSE = "written for elman, CC0"
SPLITS = ("train", "validation", "test")


# ----------------------------------------------------------------------------
# Shared helpers
# ----------------------------------------------------------------------------


def write_text(relpath, text):
    """Writes `text` as UTF-8 with LF line endings under data/."""
    path = DATA_DIR / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
    return path


def dedupe_key(text):
    """Identity of a sentence for the cross-split check: case, spaces, punctuation ignored."""
    return re.sub(r"[\W_]+", "", text.lower())


def weighted(rng, pairs):
    """Picks from [(item, weight), ...]."""
    total = sum(w for _, w in pairs)
    x = rng.random() * total
    for item, w in pairs:
        x -= w
        if x < 0:
            return item
    return pairs[-1][0]


def flip(polarity):
    return "negative" if polarity == "positive" else "positive"


def file_size(relpath):
    return (DATA_DIR / relpath).stat().st_size


def count_lines(relpath):
    return (DATA_DIR / relpath).read_bytes().count(b"\n")


def md5_bucket(text, buckets):
    return int(hashlib.md5(text.encode("utf-8")).hexdigest(), 16) % buckets


def generate_splits(make, sizes, seed, anchors=(), max_tries=200000):
    """Draws unique examples for each split; anchors go first into train.

    `make(rng, split, index)` returns (key_text, example). Keys are compared with
    `dedupe_key`, so no two splits (and no two rows) share a sentence.
    """
    rng = random.Random(seed)
    seen = set()
    out = {}
    for split in SPLITS:
        rows = []
        if split == "train":
            for key_text, example in anchors:
                key = dedupe_key(key_text)
                if key in seen:
                    raise AssertionError(f"duplicate anchor: {key_text}")
                seen.add(key)
                rows.append(example)
        tries = 0
        while len(rows) < sizes[split]:
            tries += 1
            if tries > max_tries:
                raise RuntimeError(f"grammar too small for {split}: {len(rows)} rows")
            made = make(rng, split, len(rows))
            if made is None:
                continue
            key_text, example = made
            key = dedupe_key(key_text)
            if key in seen:
                continue
            seen.add(key)
            rows.append(example)
        rng.shuffle(rows)
        out[split] = rows
    return out


# ----------------------------------------------------------------------------
# 1. Sentiment
# ----------------------------------------------------------------------------
#
# Rule the labels follow, in both languages:
#   * a clause's polarity is its adjective's (or verdict's) polarity;
#   * a negator (not / never / 不 / 一点也不 / 并不 ...) flips it;
#   * after a contrast word (but / however / 但 / 但是 / 不过 / 可是) the second
#     part decides the label; clauses joined by "and" / "，而且" share a polarity.

EN_ASPECTS = {
    # noun phrases (variants), plural?, positive adjectives, negative adjectives
    "restaurant": [
        (["the food", "the food here"], False,
         ["great", "delicious", "tasty", "fresh", "amazing", "good", "excellent"],
         ["bland", "cold", "greasy", "awful", "terrible", "bad"]),
        (["the service"], False,
         ["fast", "friendly", "great", "excellent", "attentive", "good"],
         ["slow", "rude", "terrible", "awful", "bad", "careless"]),
        (["the staff", "the waiters"], True,
         ["friendly", "helpful", "kind", "polite", "cheerful"],
         ["rude", "unhelpful", "careless", "grumpy"]),
        (["the prices", "the prices here"], True,
         ["fair", "reasonable", "low"], ["too high", "unfair", "silly"]),
        (["the soup", "the curry", "the pizza", "the fish"], False,
         ["hot", "tasty", "delicious", "rich", "good"],
         ["cold", "salty", "bland", "watery", "bad", "burnt"]),
        (["the noodles", "the dumplings", "the fries"], True,
         ["fresh", "tasty", "perfect", "good"], ["soggy", "cold", "greasy", "bad"]),
        (["the place", "the dining room", "the atmosphere"], False,
         ["cozy", "relaxing", "lovely", "clean", "nice"],
         ["noisy", "crowded", "dirty", "gloomy"]),
        (["the portions"], True, ["generous", "big"], ["tiny", "small", "stingy"]),
        (["the coffee", "the tea"], False,
         ["strong", "smooth", "great", "good"], ["bitter", "weak", "cold", "stale"]),
        (["the dessert", "the cake"], False,
         ["wonderful", "light", "delicious"], ["dry", "stale", "too sweet"]),
    ],
    "product": [
        (["the phone", "this phone", "the laptop"], False,
         ["fast", "reliable", "great", "light", "good", "excellent"],
         ["slow", "heavy", "unreliable", "buggy", "bad", "terrible"]),
        (["the battery", "the battery life"], False,
         ["excellent", "great", "good", "impressive"], ["weak", "poor", "bad", "awful"]),
        (["the screen", "the display"], False,
         ["bright", "sharp", "beautiful", "clear"], ["dim", "blurry", "dull", "scratched"]),
        (["the sound", "the sound quality"], False,
         ["clear", "rich", "great", "good"], ["tinny", "muffled", "harsh", "bad"]),
        (["the delivery", "the shipping"], False,
         ["fast", "quick", "smooth"], ["slow", "late", "messy"]),
        (["the packaging", "the box"], False,
         ["neat", "sturdy", "nice"], ["damaged", "flimsy", "torn"]),
        (["the price"], False, ["fair", "reasonable", "low"], ["too high", "steep"]),
        (["the headphones", "the cables"], True,
         ["comfortable", "light", "sturdy"], ["uncomfortable", "cheap", "flimsy"]),
        (["the build quality", "the camera"], False,
         ["solid", "excellent", "great"], ["poor", "cheap", "disappointing"]),
        (["the instructions", "the buttons"], True,
         ["clear", "simple", "handy"], ["confusing", "useless", "awkward"]),
    ],
    "film": [
        (["the film", "the movie", "this film"], False,
         ["brilliant", "gripping", "moving", "funny", "great", "wonderful", "good"],
         ["boring", "dull", "predictable", "awful", "terrible", "slow", "bad"]),
        (["the plot", "the story"], False,
         ["clever", "gripping", "original", "good"],
         ["confusing", "predictable", "silly", "weak"]),
        (["the acting", "the lead role"], False,
         ["superb", "convincing", "excellent", "good"], ["wooden", "flat", "weak", "bad"]),
        (["the ending", "the last scene"], False,
         ["moving", "satisfying", "clever"], ["rushed", "disappointing", "silly"]),
        (["the soundtrack", "the music"], False,
         ["beautiful", "catchy", "lovely"], ["annoying", "forgettable", "loud"]),
        (["the dialogue", "the script"], False,
         ["sharp", "witty", "smart"], ["clumsy", "flat", "stiff"]),
        (["the actors", "the jokes"], True,
         ["convincing", "funny", "charming"], ["unconvincing", "stale", "tired"]),
        (["the special effects", "the fight scenes"], True,
         ["stunning", "impressive", "great"], ["cheap", "messy", "boring"]),
    ],
}

# Adjectives that sound wrong after "very"/"quite".
EN_ABSOLUTE = {"amazing", "excellent", "terrible", "awful", "brilliant", "superb",
               "wonderful", "perfect", "too high", "too sweet", "useless", "stunning"}

EN_VERDICTS = {
    # (plain form, negated form, polarity of the plain form)
    "restaurant": [
        ("we will come back", "we will not come back", "positive"),
        ("i would recommend this place", "i would not recommend this place", "positive"),
        ("it was worth the money", "it was not worth the money", "positive"),
        ("it was a waste of money", "it was not a waste of money", "negative"),
        ("i enjoyed the meal", "i did not enjoy the meal", "positive"),
        ("i was disappointed", "i was not disappointed", "negative"),
    ],
    "product": [
        ("i would buy it again", "i would not buy it again", "positive"),
        ("i would recommend it", "i would not recommend it", "positive"),
        ("i regret buying it", "i do not regret buying it", "negative"),
        ("it was worth the money", "it was not worth the money", "positive"),
        ("it works well", "it does not work well", "positive"),
        ("i am happy with it", "i am not happy with it", "positive"),
    ],
    "film": [
        ("i would watch it again", "i would not watch it again", "positive"),
        ("it was worth watching", "it was not worth watching", "positive"),
        ("i enjoyed the film", "i did not enjoy the film", "positive"),
        ("it was a waste of time", "it was not a waste of time", "negative"),
        ("i was bored", "i was not bored", "negative"),
        ("i recommend it to everyone", "i do not recommend it to anyone", "positive"),
    ],
}

EN_OPENERS = {
    "restaurant": [
        "we had dinner here last night", "we came here for a birthday lunch",
        "i ordered the set menu", "my family tried this place last weekend",
        "we visited on a busy saturday evening with two friends",
        "i came here with my colleagues after work", "we booked a table for four",
    ],
    "product": [
        "i bought this phone two weeks ago", "i have used these headphones for a month",
        "i ordered it online last week", "my brother gave me this laptop for my birthday",
        "i have had it for about three months now", "i picked it up in a shop near my office",
    ],
    "film": [
        "i watched this film with my sister", "we saw the movie on friday night",
        "i went to see it at the cinema yesterday", "my friends and i watched it at home",
        "i finally saw it after reading many reviews", "we went to the late show on sunday",
    ],
}

EN_GENERIC = {"positive": ["good", "great", "nice"], "negative": ["bad", "terrible", "awful"]}
EN_INTENS = ["very ", "really ", "so ", "quite ", "pretty ", "extremely "]
EN_ABS_INTENS = ["absolutely ", "truly ", "really "]


def en_clause(rng, aspect, polarity, negated, tense):
    nps, plural, pos, neg = aspect
    noun_phrase = rng.choice(nps)
    base = flip(polarity) if negated else polarity
    adj = rng.choice(pos if base == "positive" else neg)
    if tense == "past":
        be = "were" if plural else "was"
    else:
        be = "are" if plural else "is"
    if negated:
        word = weighted(rng, [("not", 4), ("never", 1)])
        mod = ""
        if word == "not" and adj not in EN_ABSOLUTE and rng.random() < 0.3:
            mod = rng.choice(["very ", "that ", "really "])
        tail = " at all" if word == "not" and not mod and rng.random() < 0.25 else ""
        return f"{noun_phrase} {be} {word} {mod}{adj}{tail}"
    if rng.random() < 0.45 and not adj.startswith("too "):
        mod = rng.choice(EN_ABS_INTENS if adj in EN_ABSOLUTE else EN_INTENS)
    else:
        mod = ""
    return f"{noun_phrase} {be} {mod}{adj}"


def en_segment(rng, domain, aspects, polarity, negate_prob, tense, verdict_prob=0.15):
    """One or two clauses (or a verdict) sharing one polarity. Returns (text, negated?)."""
    if rng.random() < verdict_prob:
        verdicts = EN_VERDICTS[domain]
        if negate_prob == 0.0:
            verdicts = [v for v in verdicts if v[2] == polarity]
        plain, negated_form, base = rng.choice(verdicts)
        return (plain, False) if base == polarity else (negated_form, True)
    negated = rng.random() < negate_prob
    text = en_clause(rng, aspects.pop(), polarity, negated, tense)
    if rng.random() < 0.3 and aspects:
        neg2 = rng.random() < negate_prob / 2
        text += " and " + en_clause(rng, aspects.pop(), polarity, neg2, tense)
        negated = negated or neg2
    return text, negated


def en_fragment(rng, domain, polarity, negated):
    if negated:
        return f"not {rng.choice(EN_GENERIC[flip(polarity)])} at all"
    nps, _, pos, neg = rng.choice(EN_ASPECTS[domain])
    noun = rng.choice(nps).split(" ", 1)[1].replace(" here", "")
    adj = rng.choice(pos if polarity == "positive" else neg)
    if adj.startswith("too "):
        return None
    if rng.random() < 0.6:
        mod = rng.choice(EN_ABS_INTENS if adj in EN_ABSOLUTE else ["really ", "very ", "quite "])
        return f"{mod}{adj} {noun}"
    nps2, _, pos2, neg2 = rng.choice(EN_ASPECTS[domain])
    noun2 = rng.choice(nps2).split(" ", 1)[1].replace(" here", "")
    adj2 = rng.choice(pos2 if polarity == "positive" else neg2)
    if noun2 == noun or adj2.startswith("too "):
        return None
    return f"{adj} {noun} and {adj2} {noun2}"


def make_en_sentiment(rng, split, index):
    label = "positive" if index % 2 == 0 else "negative"
    domain = rng.choice(list(EN_ASPECTS))
    aspects = rng.sample(EN_ASPECTS[domain], 4)
    tense = "past" if rng.random() < 0.75 else "present"
    r = rng.random()
    fragment = False
    if r < 0.20:
        kind = "contrast"
        first, _ = en_segment(rng, domain, aspects, flip(label), 0.25, tense, 0.0)
        second, _ = en_segment(rng, domain, aspects, label, 0.25, tense)
        joiner = weighted(rng, [(", but ", 6), (". however, ", 2), (" but ", 1),
                                (", however ", 1)])
        body = first + joiner + second
    elif r < 0.34:
        kind = "negation"
        if rng.random() < 0.15:
            body, fragment = en_fragment(rng, domain, label, True), True
        else:
            body, negated = en_segment(rng, domain, aspects, label, 1.0, tense)
            if not negated:
                return None
    elif r < 0.42:
        kind = "plain"
        body, fragment = en_fragment(rng, domain, label, False), True
        if body is None:
            return None
    else:
        kind = "plain"
        with_closer = rng.random() < 0.2
        body, _ = en_segment(rng, domain, aspects, label, 0.0, tense,
                             0.0 if with_closer else 0.15)
        if with_closer:
            plain, negated_form, base = rng.choice(EN_VERDICTS[domain])
            if base == label:
                body += ", so " + plain
    if not fragment and rng.random() < 0.25:
        opener = rng.choice(EN_OPENERS[domain])
        body = opener + weighted(rng, [(". ", 3), (", and ", 1)]) + body
    end = weighted(rng, [("", 4), (".", 4), ("!", 1)])
    text = body + end
    if not 2 <= len(text.split()) <= 30:
        return None
    return text, (text, label, kind)


EN_SENTIMENT_ANCHORS = [
    ("the service was slow, but the food was great", "positive", "contrast"),
    ("the food was great, but the service was terrible", "negative", "contrast"),
    ("not bad at all", "positive", "negation"),
    ("not good", "negative", "negation"),
    ("not good at all", "negative", "negation"),
    ("the food was not good", "negative", "negation"),
    ("the film was not boring at all", "positive", "negation"),
    ("the plot was predictable, but the acting was superb", "positive", "contrast"),
    ("the screen is bright, but the battery is weak", "negative", "contrast"),
]

ZH_ASPECTS = {
    # name variants, positive adjectives, negative adjectives
    "restaurant": [
        (["菜", "这里的菜", "这家店的菜"], ["好吃", "新鲜", "不错", "精致"],
         ["难吃", "咸", "油腻", "凉"]),
        (["味道", "这家店的味道"], ["好", "不错", "正宗", "棒"], ["差", "淡", "怪", "咸"]),
        (["服务", "这家店的服务", "这里的服务"], ["好", "周到", "热情", "快", "不错"],
         ["慢", "差", "冷淡", "糟糕"]),
        (["环境", "店里的环境"], ["安静", "干净", "舒服", "优雅"], ["吵", "脏", "乱", "差"]),
        (["价格", "这里的价格"], ["便宜", "实惠", "合理"], ["贵", "高"]),
        (["上菜速度", "上菜"], ["快", "及时"], ["慢"]),
        (["服务员", "老板"], ["热情", "礼貌", "耐心", "客气"], ["冷淡", "粗鲁", "凶"]),
        (["汤", "面条", "饺子"], ["鲜", "香", "好吃"], ["咸", "淡", "凉", "难吃"]),
        (["分量", "菜的分量"], ["足", "大"], ["少", "小"]),
        (["咖啡", "奶茶"], ["香", "好喝"], ["苦", "难喝", "淡"]),
    ],
    "product": [
        (["手机", "这款手机", "电脑"], ["好用", "流畅", "快", "轻"], ["卡", "慢", "重", "难用"]),
        (["屏幕", "手机屏幕"], ["清晰", "亮", "漂亮"], ["暗", "模糊"]),
        (["电池", "续航"], ["耐用", "好", "强"], ["差", "弱", "短"]),
        (["质量", "做工"], ["好", "不错", "结实", "精细"], ["差", "糟糕", "粗糙"]),
        (["物流", "快递", "发货"], ["快", "及时"], ["慢"]),
        (["包装"], ["精美", "结实", "仔细"], ["简陋", "差"]),
        (["音质", "耳机的音质"], ["好", "清楚"], ["差", "闷"]),
        (["耳机", "键盘"], ["舒服", "轻", "好用"], ["重", "难用", "硬"]),
        (["价格", "价钱"], ["便宜", "实惠", "划算"], ["贵", "高"]),
        (["客服"], ["耐心", "热情", "专业"], ["冷淡", "敷衍", "差"]),
    ],
    "film": [
        (["电影", "这部电影", "这部片子"], ["精彩", "感人", "好看", "有趣"],
         ["无聊", "难看", "拖沓", "老套"]),
        (["剧情", "故事"], ["精彩", "紧凑", "有趣", "新颖"], ["无聊", "拖沓", "老套", "混乱"]),
        (["演员的演技", "主角的演技", "演技"], ["出色", "自然", "好"], ["尴尬", "做作", "差"]),
        (["结局", "最后的结局"], ["感人", "精彩", "意外"], ["仓促", "老套", "无聊"]),
        (["画面", "特效"], ["漂亮", "精美", "震撼"], ["粗糙", "模糊", "假"]),
        (["配乐", "音乐"], ["好听", "动人"], ["难听", "吵"]),
        (["台词", "对白"], ["有趣", "精彩", "幽默"], ["尴尬", "无聊", "生硬"]),
        (["节奏"], ["紧凑", "好"], ["慢", "拖沓", "乱"]),
    ],
}

# Positive words that cannot take 不 (不错 already contains it; 不糟糕 sounds odd).
ZH_NO_NEGATE = {"不错", "糟糕", "棒", "凶"}

ZH_VERDICTS = {
    "restaurant": [
        ("下次还会再来", "下次不会再来了", "positive"),
        ("推荐大家来试试", "不推荐大家来", "positive"),
        ("值得一去", "不值得去", "positive"),
        ("很后悔来这里", "一点也不后悔来这里", "negative"),
        ("我很满意", "我不满意", "positive"),
        ("真让人失望", "一点也不让人失望", "negative"),
    ],
    "product": [
        ("值得买", "不值得买", "positive"),
        ("我很满意", "我不太满意", "positive"),
        ("推荐购买", "不推荐购买", "positive"),
        ("后悔买了", "不后悔买它", "negative"),
        ("还会再买", "不会再买了", "positive"),
        ("真让人失望", "一点也不让人失望", "negative"),
    ],
    "film": [
        ("值得一看", "不值得一看", "positive"),
        ("推荐大家去看", "不推荐大家去看", "positive"),
        ("还想再看一遍", "不想再看第二遍", "positive"),
        ("浪费时间", "一点也不浪费时间", "negative"),
        ("看得很开心", "看得一点也不开心", "positive"),
        ("真让人失望", "一点也不让人失望", "negative"),
    ],
}

ZH_OPENERS = {
    "restaurant": ["周末和朋友来吃饭", "第一次来这家店", "昨天晚上和家人来吃饭",
                   "我们点了四个菜", "公司聚餐选了这家店", "中午一个人来吃了一碗面"],
    "product": ["手机用了两个星期", "上周在网上买的", "耳机买来一个月了",
                "这是给妈妈买的生日礼物", "用了三个月", "朋友推荐我买的"],
    "film": ["昨天和家人一起看了这部电影", "周末去电影院看了", "和同学一起去看的",
             "等了很久终于看到了", "晚上在家看完了", "看了很多影评才去看的"],
}

ZH_FRAGMENT_ADJ = {
    "positive": ["好吃", "好看", "好用", "精彩", "好听", "实惠", "划算", "好喝", "不错"],
    "negative": ["难吃", "难看", "难用", "差", "贵", "无聊", "难听", "难喝", "糟糕", "慢"],
}


def zh_degree(rng, adj, polarity_of_adj, negated):
    """Wraps an adjective with a degree word or a negator."""
    if negated:
        forms = [("不{}", 4), ("一点也不{}", 2), ("一点都不{}", 1), ("并不{}", 1),
                 ("真的不{}", 1)]
        if polarity_of_adj == "positive":
            forms += [("不太{}", 1), ("不是很{}", 1)]
        return weighted(rng, forms).format(adj)
    forms = [("很{}", 5), ("非常{}", 2), ("特别{}", 1), ("太{}了", 2), ("真{}", 1),
             ("挺{}的", 1), ("{}", 2)]
    if polarity_of_adj == "negative":
        forms += [("有点{}", 1)]
    return weighted(rng, forms).format(adj)


def zh_clause(rng, aspect, polarity, negated):
    names, pos, neg = aspect
    base = flip(polarity) if negated else polarity
    choices = pos if base == "positive" else neg
    if negated:
        choices = [a for a in choices if a not in ZH_NO_NEGATE]
        if not choices:
            return None
    adj = rng.choice(choices)
    return rng.choice(names) + zh_degree(rng, adj, base, negated)


def zh_segment(rng, domain, aspects, polarity, negate_prob, verdict_prob=0.15):
    if rng.random() < verdict_prob:
        verdicts = ZH_VERDICTS[domain]
        if negate_prob == 0.0:
            verdicts = [v for v in verdicts if v[2] == polarity]
        plain, negated_form, base = rng.choice(verdicts)
        if base == polarity:
            return plain, False
        return negated_form, True
    negated = rng.random() < negate_prob
    text = zh_clause(rng, aspects.pop(), polarity, negated)
    if text is None:
        return None, False
    if rng.random() < 0.3 and aspects:
        neg2 = rng.random() < negate_prob / 2
        more = zh_clause(rng, aspects.pop(), polarity, neg2)
        if more is None:
            return None, False
        text += weighted(rng, [("，", 3), ("，而且", 1), ("，", 1)]) + more
        negated = negated or neg2
    return text, negated


def zh_fragment(rng, polarity, negated):
    if negated:
        choices = [a for a in ZH_FRAGMENT_ADJ[flip(polarity)] if a not in ZH_NO_NEGATE]
        return zh_degree(rng, rng.choice(choices), flip(polarity), True)
    adj = rng.choice(ZH_FRAGMENT_ADJ[polarity])
    return zh_degree(rng, adj, polarity, False)


def make_zh_sentiment(rng, split, index):
    label = "positive" if index % 2 == 0 else "negative"
    domain = rng.choice(list(ZH_ASPECTS))
    aspects = rng.sample(ZH_ASPECTS[domain], 4)
    r = rng.random()
    fragment = False
    if r < 0.20:
        kind = "contrast"
        first, _ = zh_segment(rng, domain, aspects, flip(label), 0.25, 0.0)
        second, _ = zh_segment(rng, domain, aspects, label, 0.25)
        if first is None or second is None:
            return None
        joiner = weighted(rng, [("，但", 3), ("，但是", 3), ("但是", 1), ("，不过", 2),
                                ("，可是", 1), ("。不过，", 1)])
        body = first + joiner + second
    elif r < 0.34:
        kind = "negation"
        if rng.random() < 0.2:
            body, fragment = zh_fragment(rng, label, True), True
        else:
            body, negated = zh_segment(rng, domain, aspects, label, 1.0)
            if body is None or not negated:
                return None
    elif r < 0.42:
        kind = "plain"
        body, fragment = zh_fragment(rng, label, False), True
    else:
        kind = "plain"
        with_closer = rng.random() < 0.2
        body, _ = zh_segment(rng, domain, aspects, label, 0.0, 0.0 if with_closer else 0.15)
        if body is None:
            return None
        if with_closer:
            plain, _, base = rng.choice(ZH_VERDICTS[domain])
            if base == label:
                body += "，" + plain
    if not fragment and rng.random() < 0.25:
        body = rng.choice(ZH_OPENERS[domain]) + "，" + body
    end = weighted(rng, [("", 3), ("。", 5), ("！", 1)])
    text = body + end
    if not 3 <= len(text) <= 60:
        return None
    return text, (text, label, kind)


ZH_SENTIMENT_ANCHORS = [
    ("服务慢，但味道很好", "positive", "contrast"),
    ("味道不错但是服务太差了", "negative", "contrast"),
    ("不好吃", "negative", "negation"),
    ("一点也不差", "positive", "negation"),
    ("菜很好吃，但是服务太慢了。", "negative", "contrast"),
    ("价格有点贵，不过菜很新鲜。", "positive", "contrast"),
    ("这部电影一点也不无聊！", "positive", "negation"),
]

SENTIMENT_SIZES = {"train": 800, "validation": 160, "test": 160}


def build_sentiment():
    stats = {}
    for lang, make, anchors, seed in (
        ("en", make_en_sentiment, EN_SENTIMENT_ANCHORS, 1101),
        ("zh", make_zh_sentiment, ZH_SENTIMENT_ANCHORS, 1102),
    ):
        # Anchors take the first slots; generation continues the label alternation.
        anchor_rows = [(text, (text, label, kind)) for text, label, kind in anchors]
        splits = generate_splits(make, SENTIMENT_SIZES, seed, anchor_rows)
        stats[lang] = {}
        for split, rows in splits.items():
            buf = io.StringIO()
            writer = csv.writer(buf, lineterminator="\n")
            writer.writerow(["text", "label"])
            for text, label, _ in rows:
                writer.writerow([text, label])
            write_text(f"sentiment/{lang}/{split}.csv", buf.getvalue())
            lengths = [len(t.split()) if lang == "en" else len(t) for t, _, _ in rows]
            stats[lang][split] = {
                "rows": len(rows),
                "positive": sum(1 for r in rows if r[1] == "positive"),
                "negative": sum(1 for r in rows if r[1] == "negative"),
                "contrast": sum(1 for r in rows if r[2] == "contrast"),
                "negation": sum(1 for r in rows if r[2] == "negation"),
                "min_len": min(lengths), "max_len": max(lengths),
                "mean_len": sum(lengths) / len(lengths),
            }
    write_sentiment_readme(stats)
    return stats


def write_sentiment_readme(stats):
    lines = [
        "# Toy sentiment data (English and Chinese)",
        "",
        "Short restaurant, product and film review sentences labelled `positive` or",
        "`negative`. Every sentence was generated by `data/make_toy_data.py` from a small",
        "hand-written grammar and lexicon; nothing is copied from other datasets.",
        "",
        "## Format",
        "",
        "`{en,zh}/{train,validation,test}.csv`: UTF-8, LF line endings, header `text,label`,",
        "fields quoted by Python's `csv` module where needed (English sentences with commas",
        "are quoted). Labels: `positive`, `negative`. Chinese text uses full-width",
        "punctuation (，。！) and no spaces.",
        "",
        "## The labelling rule",
        "",
        "The labels follow one consistent rule, so a small BiLSTM can learn it:",
        "",
        "* a clause takes the polarity of its adjective or verdict (`the food was great`,",
        "  `服务很慢`);",
        "* a negator flips it (`not` / `never`; `不` / `一点也不` / `并不` / `不太` ...):",
        "  `not bad at all` is positive, `not good` is negative, `一点也不差` is positive,",
        "  `不好吃` is negative;",
        "* after a contrast word (`but`, `however`; `但` / `但是` / `不过` / `可是`) the",
        "  second part decides: `the service was slow, but the food was great` is",
        "  positive, `味道不错但是服务太差了` is negative;",
        "* clauses joined by `and` / `，而且` share one polarity; neutral openers",
        "  (`we had dinner here last night`, `周末和朋友来吃饭`) carry none.",
        "",
        "About a third of the rows are contrast or negation cases. The sentences",
        "`the service was slow, but the food was great` and `服务慢，但味道很好` are in",
        "`train`.",
        "",
        "## Sizes and label balance",
        "",
        "| language | split | rows | positive | negative | contrast | negation (no contrast) "
        "| length min / mean / max |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for lang in ("en", "zh"):
        unit = "words" if lang == "en" else "characters"
        for split in SPLITS:
            s = stats[lang][split]
            lines.append(
                f"| {lang} | {split} | {s['rows']} | {s['positive']} | {s['negative']} "
                f"| {s['contrast']} | {s['negation']} "
                f"| {s['min_len']} / {s['mean_len']:.1f} / {s['max_len']} {unit} |"
            )
    lines += [
        "",
        "No sentence appears in two splits (compared after lower-casing and removing",
        "spaces and punctuation).",
        "",
        "## How it was made",
        "",
        "`python3 data/make_toy_data.py` (standard library only, fixed seeds) rewrites",
        "every file byte for byte. Each row picks a domain, a label (alternating, so the",
        "classes stay balanced), a shape (plain, fragment, negation, contrast) and then",
        "aspects, adjectives, degree words and punctuation from per-language lexicons.",
        "",
        f"License: {LICENSE}.",
        "",
    ]
    write_text("sentiment/README.md", "\n".join(lines))


# ----------------------------------------------------------------------------
# 2. Tagging
# ----------------------------------------------------------------------------

EN_FIRST = ["John", "Mary", "David", "Sarah", "Peter", "Anna", "Michael", "Laura", "James",
            "Emma", "Thomas", "Maria", "Daniel", "Sophie", "Carlos", "Fatima", "Hans",
            "Yuki", "Elena", "Omar"]
EN_LAST = ["Smith", "Brown", "Miller", "Wilson", "Taylor", "Garcia", "Chen", "Wang",
           "Schmidt", "Rossi", "Tanaka", "Dubois", "Novak", "Kim", "Okafor", "Silva"]
EN_FAMOUS = ["Angela Merkel", "Barack Obama", "Serena Williams", "Lionel Messi"]
EN_FIRST_UNSEEN = ["Oliver", "Chloe", "Mateo", "Priya", "Lukas", "Amara", "Kenji", "Ingrid"]
EN_LAST_UNSEEN = ["Fischer", "Moreau", "Kowalski", "Haddad", "Lindqvist", "Nakamura", "Osei",
                  "Ferreira"]

EN_ORG = ["Apple", "Google", "Siemens", "Toyota", "Reuters", "Bank of China",
          "United Nations", "Red Cross", "Northwind Traders", "Bluebird Airlines",
          "Harbor Foods", "Acme Corporation", "University of Tokyo", "Microsoft", "Samsung",
          "Huawei", "Deutsche Bank", "World Health Organization"]
EN_ORG_UNSEEN = ["Zentro Systems", "Maple Leaf Bank", "Sunrise Motors", "Kestrel Labs",
                 "Orion Insurance", "Vega Airlines", "Lumen Pharma"]
EN_LOC = ["Paris", "London", "Berlin", "Tokyo", "Beijing", "Shanghai", "New York", "Madrid",
          "Rome", "Sydney", "Cairo", "Moscow", "Hong Kong", "South Africa", "Germany",
          "France", "China", "Japan", "Brazil", "Canada", "India", "Europe", "Los Angeles",
          "San Francisco"]
EN_LOC_UNSEEN = ["Lisbon", "Nairobi", "Oslo", "Lima", "Buenos Aires", "Vienna", "Hanoi",
                 "Cape Town", "Chile", "Norway"]
EN_NATIONALITY = ["German", "French", "Chinese", "American", "Japanese", "British",
                  "Italian", "Indian"]
EN_NATIONALITY_UNSEEN = ["Brazilian", "Kenyan", "Swedish"]
EN_EVENT = ["World Cup", "Olympic Games", "Nobel Prize", "Champions League"]
EN_EVENT_UNSEEN = ["Tour de France"]

EN_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
EN_MONTHS = ["January", "March", "April", "June", "July", "September", "October",
             "December"]
EN_YEARS = ["1998", "2004", "2010", "2015", "2019", "2021", "2023"]
EN_COMMON_PLACES = ["park", "garden", "kitchen", "office", "car", "train", "library"]
EN_NUMBERS = ["two", "three", "five", "six", "ten", "twelve"]

EN_TAG_TEMPLATES = [
    # (template, weight); slots: {PER} {LAST} {ORG} {LOC} {NAT} {EVENT} {DAY} {MONTH}
    # {YEAR} {PLACE} {NUM}. Slots without a type are tagged O.
    ("{ORG} opened an office in {LOC} .", 4),
    ("{ORG} opened a new store in {LOC} on {DAY} .", 2),
    ("{PER} visited {LOC} last week .", 3),
    ("{PER} works for {ORG} .", 2),
    ("{PER} works for {ORG} in {LOC} .", 3),
    ("{PER} met {PER} in {LOC} .", 2),
    ("{PER} , the head of {ORG} , said the plan was ready .", 2),
    ("{ORG} said on {DAY} it would hire {NUM} hundred people in {LOC} .", 2),
    ("Shares of {ORG} rose {NUM} percent on {DAY} .", 2),
    ("{PER} flew from {LOC} to {LOC} on {DAY} .", 2),
    ("The {NAT} team won the {EVENT} in {YEAR} .", 1),
    ("{PER} won the {EVENT} in {YEAR} .", 1),
    ("{ORG} and {ORG} signed a deal in {LOC} .", 2),
    ("A {NAT} company bought {ORG} in {MONTH} .", 1),
    ("{PER} was born in {LOC} in {YEAR} .", 2),
    ("{PER} lives in {LOC} with two cats .", 2),
    ("{PER} joined {ORG} in {MONTH} {YEAR} .", 2),
    ("{PER} told reporters in {LOC} that {ORG} would grow .", 2),
    ("Mr. {LAST} arrived in {LOC} on {DAY} .", 2),
    ("Dr. {LAST} works at {ORG} in {LOC} .", 1),
    ("{LOC} and {LOC} agreed to meet again in {MONTH} .", 1),
    ("{ORG} sells phones in {LOC} and {LOC} .", 2),
    ("The {NAT} minister met {PER} in {LOC} .", 1),
    ("{PER} ate an apple in {LOC} .", 1),
    ("{PER} bought {NUM} apples at a market in {LOC} .", 1),
    ("{PER} said {ORG} will open an office in {LOC} in {YEAR} .", 2),
    ("I met {PER} at the {ORG} office in {LOC} .", 1),
    ("{PER} moved from {LOC} to {LOC} to work for {ORG} .", 1),
    # no entities (capitalised days and months stay O)
    ("I ate an apple in the {PLACE} .", 2),
    ("She bought {NUM} apples at the market on {DAY} .", 2),
    ("Apples are cheap this week .", 1),
    ("He put an apple in his bag on {DAY} morning .", 1),
    ("We picked apples in the garden in {MONTH} .", 1),
    ("The apple pie was very sweet .", 1),
    ("Apple pie is on the menu every {DAY} .", 1),
    ("The weather was cold on {DAY} morning .", 1),
    ("It rained all day on {DAY} , so we stayed at home .", 1),
    ("The children played football in the {PLACE} after school .", 1),
    ("My brother cooked dinner for {NUM} friends .", 1),
    ("The meeting was moved to {DAY} .", 1),
    ("Prices rose again in {MONTH} .", 1),
    ("She read a book in the {PLACE} on {DAY} .", 1),
    ("They walked to the station in the rain .", 1),
]

EN_TAG_ANCHORS = [
    "Apple opened an office in Paris .",
    "I ate an apple in the park .",
    "Angela Merkel visited New York last week .",
    "Mary Smith works for Bank of China in Shanghai .",
]


def en_entity(rng, slot, unseen_prob):
    """Returns (tokens, type) for one slot."""
    use_unseen = rng.random() < unseen_prob

    def pick(seen, unseen):
        return rng.choice(unseen if use_unseen else seen)

    if slot == "PER":
        r = rng.random()
        if r < 0.1 and not use_unseen:
            return rng.choice(EN_FAMOUS).split(), "PER"
        if r < 0.7:
            name = f"{pick(EN_FIRST, EN_FIRST_UNSEEN)} {pick(EN_LAST, EN_LAST_UNSEEN)}"
            return name.split(), "PER"
        if r < 0.85:
            return [pick(EN_LAST, EN_LAST_UNSEEN)], "PER"
        return [pick(EN_FIRST, EN_FIRST_UNSEEN)], "PER"
    if slot == "LAST":
        return [pick(EN_LAST, EN_LAST_UNSEEN)], "PER"
    if slot == "ORG":
        if not use_unseen and rng.random() < 0.15:
            return ["Apple"], "ORG"
        return pick(EN_ORG, EN_ORG_UNSEEN).split(), "ORG"
    if slot == "LOC":
        return pick(EN_LOC, EN_LOC_UNSEEN).split(), "LOC"
    if slot == "NAT":
        return [pick(EN_NATIONALITY, EN_NATIONALITY_UNSEEN)], "MISC"
    if slot == "EVENT":
        return pick(EN_EVENT, EN_EVENT_UNSEEN).split(), "MISC"
    plain = {"DAY": EN_DAYS, "MONTH": EN_MONTHS, "YEAR": EN_YEARS,
             "PLACE": EN_COMMON_PLACES, "NUM": EN_NUMBERS}[slot]
    return [rng.choice(plain)], None


def fill_tag_template(rng, template, entity, unseen_prob, split_tokens):
    tokens, tags = [], []
    for piece in split_tokens(template):
        m = re.fullmatch(r"\{([A-Z]+)\}", piece)
        if not m:
            tokens.append(piece)
            tags.append("O")
            continue
        words, etype = entity(rng, m.group(1), unseen_prob)
        for i, word in enumerate(words):
            tokens.append(word)
            tags.append("O" if etype is None else ("B-" if i == 0 else "I-") + etype)
    return tokens, tags


def en_anchor_tags(sentence):
    known = {"Apple": "ORG", "Paris": "LOC", "Angela Merkel": "PER", "New York": "LOC",
             "Mary Smith": "PER", "Bank of China": "ORG", "Shanghai": "LOC"}
    tokens = sentence.split()
    tags = ["O"] * len(tokens)
    for name, etype in known.items():
        words = name.split()
        for i in range(len(tokens) - len(words) + 1):
            if tokens[i:i + len(words)] == words:
                tags[i] = "B-" + etype
                for j in range(1, len(words)):
                    tags[i + j] = "I-" + etype
    return tokens, tags


UNSEEN_PROB = {"train": 0.0, "validation": 0.3, "test": 0.3}


def make_en_tagging(rng, split, index):
    template = weighted(rng, EN_TAG_TEMPLATES)
    tokens, tags = fill_tag_template(rng, template, en_entity, UNSEEN_PROB[split], str.split)
    return " ".join(tokens), (tokens, tags)


ZH_PER = ["张伟", "李娜", "王芳", "刘洋", "陈静", "杨磊", "赵敏", "黄明", "周丽", "吴刚",
          "孙悦", "马超", "朱琳", "胡军", "郭涛", "林峰"]
ZH_PER_UNSEEN = ["徐明", "宋佳", "郑浩", "谢婷", "韩雪", "冯刚"]
ZH_LOC = ["北京", "上海", "巴黎", "广州", "深圳", "杭州", "南京", "成都", "武汉", "西安",
          "东京", "伦敦", "纽约", "香港", "中国", "日本", "法国"]
ZH_LOC_UNSEEN = ["重庆", "苏州", "柏林", "罗马", "天津", "厦门"]
ZH_COMPANY = ["华为", "腾讯", "阿里巴巴", "苹果公司", "苹果", "中国银行", "小米公司",
              "联想"]
ZH_COMPANY_UNSEEN = ["百度", "南方航空", "招商银行"]
ZH_UNIV = ["清华大学", "北京大学", "复旦大学", "南京大学"]
ZH_UNIV_UNSEEN = ["浙江大学", "武汉大学"]
ZH_OTHER_ORG = ["联合国", "新华社", "中央电视台", "红十字会"]
ZH_TIME = ["今天", "明天", "后天", "下午", "周末", "晚上", "上午"]
ZH_PAST = ["昨天", "前天", "上周", "上个月", "去年", "今天上午"]
ZH_NUM = ["一", "两", "三", "五", "十"]
ZH_PLACES = ["公园", "超市", "图书馆", "学校", "食堂", "操场", "医院"]
ZH_FRUIT = ["香蕉", "西瓜", "橘子", "葡萄"]

ZH_TAG_TEMPLATES = [
    ("{PER}在{LOC}工作。", 3),
    ("{PER}是{COMPANY}的员工。", 2),
    ("{PER}是{UNIV}的学生。", 2),
    ("{COMPANY}在{LOC}开了新店。", 3),
    ("{COMPANY}发布了新手机。", 3),
    ("{COMPANY}{PAST}发布了新产品。", 2),
    ("{PER}{PAST}去了{LOC}。", 3),
    ("{PER}和{PER}在{LOC}见面了。", 2),
    ("{PER}从{LOC}飞到了{LOC}。", 2),
    ("{PER}毕业于{UNIV}。", 2),
    ("{COMPANY}的总部在{LOC}。", 2),
    ("{PER}在{COMPANY}工作了{NUM}年。", 2),
    ("{UNIV}位于{LOC}。", 1),
    ("{PER}加入了{COMPANY}。", 2),
    ("{PER}说{COMPANY}的新手机很好用。", 2),
    ("{OTHERORG}的代表{PAST}访问了{LOC}。", 1),
    ("{PER}{PAST}在{OTHERORG}发表了讲话。", 1),
    ("{LOC}的天气很好。", 1),
    ("{PER}明天要去{LOC}出差。", 2),
    ("{COMPANY}和{COMPANY}在{LOC}签了合同。", 1),
    ("{PER}在{UNIV}学习计算机。", 1),
    # 苹果 as a fruit (O)
    ("{PER}喜欢吃苹果。", 2),
    ("{PER}在{LOC}买了一袋苹果。", 1),
    ("妈妈买了{NUM}个苹果。", 1),
    ("这个苹果很甜。", 1),
    ("这些苹果很新鲜。", 1),
    ("苹果和{FRUIT}都很好吃。", 1),
    ("我每天吃一个苹果。", 1),
    ("桌子上有{NUM}个红苹果。", 1),
    ("{PAST}我吃了一个苹果。", 1),
    # no entities
    ("我{TIME}去{PLACE}。", 2),
    ("{TIME}天气很好。", 1),
    ("孩子们在{PLACE}玩。", 1),
    ("他在{PLACE}看书。", 1),
    ("{TIME}的会议取消了。", 1),
    ("我喜欢深度学习。", 1),
    ("我们{TIME}一起去{PLACE}吧。", 1),
    ("她买了{NUM}斤{FRUIT}。", 1),
]

ZH_TAG_ANCHORS = [
    ("苹果公司发布了新手机。", {"苹果公司": "ORG"}),
    ("苹果在北京开了新店。", {"苹果": "ORG", "北京": "LOC"}),
    ("我喜欢吃苹果。", {}),
    ("苹果很甜。", {}),
    ("张伟在上海工作。", {"张伟": "PER", "上海": "LOC"}),
    ("李娜是清华大学的学生。", {"李娜": "PER", "清华大学": "ORG"}),
    ("华为的总部在深圳。", {"华为": "ORG", "深圳": "LOC"}),
    ("王芳从北京飞到了巴黎。", {"王芳": "PER", "北京": "LOC", "巴黎": "LOC"}),
]


def zh_entity(rng, slot, unseen_prob):
    use_unseen = rng.random() < unseen_prob
    table = {
        "PER": (ZH_PER, ZH_PER_UNSEEN, "PER"),
        "LOC": (ZH_LOC, ZH_LOC_UNSEEN, "LOC"),
        "COMPANY": (ZH_COMPANY, ZH_COMPANY_UNSEEN, "ORG"),
        "UNIV": (ZH_UNIV, ZH_UNIV_UNSEEN, "ORG"),
        "OTHERORG": (ZH_OTHER_ORG, ZH_OTHER_ORG, "ORG"),
    }
    if slot in table:
        seen, unseen, etype = table[slot]
        if slot == "COMPANY" and not use_unseen and rng.random() < 0.2:
            return list(rng.choice(["苹果", "苹果公司"])), etype
        return list(rng.choice(unseen if use_unseen else seen)), etype
    plain = {"TIME": ZH_TIME, "PAST": ZH_PAST, "NUM": ZH_NUM, "PLACE": ZH_PLACES,
             "FRUIT": ZH_FRUIT}[slot]
    return list(rng.choice(plain)), None


def zh_split_template(template):
    return re.findall(r"\{[A-Z]+\}|.", template)


def make_zh_tagging(rng, split, index):
    template = weighted(rng, ZH_TAG_TEMPLATES)
    tokens, tags = fill_tag_template(rng, template, zh_entity, UNSEEN_PROB[split],
                                     zh_split_template)
    return "".join(tokens), (tokens, tags)


def zh_anchor_tags(sentence, entities):
    chars = list(sentence)
    tags = ["O"] * len(chars)
    for name, etype in entities.items():
        i = sentence.index(name)
        tags[i] = "B-" + etype
        for j in range(1, len(name)):
            tags[i + j] = "I-" + etype
    return chars, tags


TAGGING_SIZES = {"train": 400, "validation": 80, "test": 80}


def entity_spans(tokens, tags):
    spans, current = [], None
    for token, tag in zip(tokens, tags):
        if tag.startswith("B-"):
            if current:
                spans.append(current)
            current = [tag[2:], [token]]
        elif tag.startswith("I-") and current:
            current[1].append(token)
        else:
            if current:
                spans.append(current)
            current = None
    if current:
        spans.append(current)
    return [(etype, words) for etype, words in spans]


def tagging_stats(splits, joiner):
    stats = {}
    train_names = {joiner.join(w) for tokens, tags in splits["train"]
                   for _, w in entity_spans(tokens, tags)}
    for split, rows in splits.items():
        counts = {}
        unseen = total = no_entity = 0
        for tokens, tags in rows:
            spans = entity_spans(tokens, tags)
            if not spans:
                no_entity += 1
            for etype, words in spans:
                counts[etype] = counts.get(etype, 0) + 1
                total += 1
                if joiner.join(words) not in train_names:
                    unseen += 1
        stats[split] = {"sentences": len(rows), "tokens": sum(len(t) for t, _ in rows),
                        "entities": counts, "unseen": unseen, "total": total,
                        "no_entity": no_entity}
    return stats


def build_tagging():
    en_anchors = [(s, en_anchor_tags(s)) for s in EN_TAG_ANCHORS]
    en = generate_splits(make_en_tagging, TAGGING_SIZES, 2201, en_anchors)
    for split, rows in en.items():
        out = ["-DOCSTART- O", ""]
        for tokens, tags in rows:
            out += [f"{tok} {tag}" for tok, tag in zip(tokens, tags)]
            out.append("")
        write_text(f"tagging/en/{split}.conll", "\n".join(out) + "\n")

    zh_anchors = [(s, zh_anchor_tags(s, ents)) for s, ents in ZH_TAG_ANCHORS]
    zh = generate_splits(make_zh_tagging, TAGGING_SIZES, 2202, zh_anchors)
    for split, rows in zh.items():
        out = []
        for chars, tags in rows:
            out += [f"{ch} {tag}" for ch, tag in zip(chars, tags)]
            out.append("")
        write_text(f"tagging/zh/{split}.txt", "\n".join(out) + "\n")

    stats = {"en": tagging_stats(en, " "), "zh": tagging_stats(zh, "")}
    write_tagging_readme(stats)
    return stats


def write_tagging_readme(stats):
    lines = [
        "# Toy tagging data (English CoNLL-style NER, Chinese character NER)",
        "",
        "Short news-like and everyday sentences with named entities, generated by",
        "`data/make_toy_data.py` from hand-written templates and name lists; nothing is",
        "copied from other datasets.",
        "",
        "## Format",
        "",
        "* `en/{train,validation,test}.conll`: CoNLL-2003 style, one `token TAG` per line",
        "  (two columns, one space), a blank line after every sentence, the file starts",
        "  with `-DOCSTART- O` and a blank line. Tokens are whitespace-free; punctuation",
        "  is its own token.",
        "* `zh/{train,validation,test}.txt`: one Chinese character per line, `字 TAG`",
        "  (one space), a blank line after every sentence, no `-DOCSTART-` line.",
        "",
        "Tags are BIO (IOB2): every entity starts with `B-`. Types: `PER`, `ORG`, `LOC`",
        "and, in English only and rarely, `MISC` (nationalities such as `German`, events",
        "such as `World Cup`). Titles (`Mr.`, `Dr.`), days and months are `O` even",
        "though they are capitalised.",
        "",
        "## What the data exercises",
        "",
        "* Company versus fruit: `Apple opened an office in Paris .` (Apple = `B-ORG`)",
        "  against `I ate an apple in the park .`, `Apples are cheap this week .`,",
        "  `Apple pie is on the menu ...` (all `O`); `苹果公司发布了新手机。` and",
        "  `苹果在北京开了新店。` (苹果 = ORG) against `我喜欢吃苹果。` and `苹果很甜。` (O).",
        "* Multi-token entities: `New York`, `Angela Merkel`, `Bank of China`, `清华大学`.",
        "* Sentences with no entity at all.",
        "* Unseen names: `validation` and `test` draw about 30% of their names from lists",
        "  that `train` never uses (e.g. `Lisbon`, `Kestrel Labs`, `Priya Haddad`, `重庆`,",
        "  `徐明`), in the same sentence templates that `train` uses.",
        "",
        "## Sizes",
        "",
        "| language | split | sentences | tokens | PER | ORG | LOC | MISC | no entity "
        "| entity strings unseen in train |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for lang in ("en", "zh"):
        for split in SPLITS:
            s = stats[lang][split]
            e = s["entities"]
            lines.append(
                f"| {lang} | {split} | {s['sentences']} | {s['tokens']} | {e.get('PER', 0)} "
                f"| {e.get('ORG', 0)} | {e.get('LOC', 0)} | {e.get('MISC', 0)} "
                f"| {s['no_entity']} | {s['unseen']} of {s['total']} |"
            )
    lines += [
        "",
        "No sentence appears in two splits.",
        "",
        "## How it was made",
        "",
        "`python3 data/make_toy_data.py` (standard library only, fixed seeds) rewrites",
        "every file byte for byte. Each sentence picks a template and fills its slots",
        "from the name lists; `validation`/`test` swap in a held-out name 30% of the",
        "time.",
        "",
        f"License: {LICENSE}.",
        "",
    ]
    write_text("tagging/README.md", "\n".join(lines))


# ----------------------------------------------------------------------------
# 3. Translation (English -> Chinese), a small synchronous grammar
# ----------------------------------------------------------------------------
#
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


# ----------------------------------------------------------------------------
# 4. Language-model corpora
# ----------------------------------------------------------------------------
#
# Each paragraph is a short story from one of a few story grammars; the same
# names and objects recur inside a story, and sentence shapes recur across
# stories, so a recurrent LM's perplexity drops clearly. Every distinct sentence
# is assigned to one split by its MD5 hash, so the validation and test files
# never repeat a training sentence.

LM_SPLIT_BUCKETS = {"train": range(0, 16), "valid": range(16, 18), "test": range(18, 20)}


def lm_sentence_split(sentence):
    b = md5_bucket(sentence, 20)
    for split, buckets in LM_SPLIT_BUCKETS.items():
        if b in buckets:
            return split
    raise AssertionError


class StoryWriter:
    """Draws each sentence of a story until one lands in the wanted split."""

    def __init__(self, rng, split, tries=40):
        self.rng, self.split, self.tries = rng, split, tries
        self.sentences = []
        self.dropped = 0

    def say(self, make):
        for _ in range(self.tries):
            sentence = make()
            if lm_sentence_split(sentence) == self.split:
                self.sentences.append(sentence)
                return
        self.dropped += 1  # no variant of this sentence belongs to the split


def write_story(rng, split, story, attempts=30):
    """Runs a story grammar until every sentence lands in `split` (or keeps the best try)."""
    best = None
    for _ in range(attempts):
        w = StoryWriter(rng, split)
        story(w)
        if best is None or w.dropped < best.dropped:
            best = w
        if w.dropped == 0:
            break
    return best.sentences


EN_CAT_NAMES = ["Tom", "Milo", "Luna", "Bella", "Oscar", "Coco", "Max", "Nala", "Simba",
                "Pepper"]
EN_COLOURS = ["black", "white", "grey", "orange", "brown", "small", "fat", "old", "young",
              "fluffy"]
EN_SPOTS = ["the mat", "the sofa", "the bed", "the chair", "the windowsill", "the rug",
            "a warm box", "the stairs"]
EN_OWNERS = ["the girl", "the boy", "the old man", "the old woman", "my sister",
             "my mother", "the baby", "my father"]
EN_CAT_MORNING = ["drinks some milk", "eats its breakfast", "washes its face",
                  "chases a ball", "looks out of the window", "waits by the door",
                  "sits in the sun", "plays with a string"]
EN_CAT_EVENING = ["sleeps by the fire", "sits on the sofa", "watches the birds",
                  "plays with a ball", "climbs onto the bed", "waits for dinner"]
EN_CAT_FEEL = ["happy", "sleepy", "hungry", "curious", "calm", "warm", "lazy", "quiet"]

EN_SKY = ["blue", "grey", "dark", "clear", "cloudy", "bright", "pale"]
EN_WIND = ["cold", "warm", "strong", "soft", "gentle", "wild"]
EN_AIR = ["cold", "warm", "wet", "dry", "fresh", "cool", "hot"]
EN_PART = ["morning", "afternoon", "evening", "night"]
EN_EVENT = ["rain", "snow", "be sunny", "be windy", "be foggy", "get colder", "get warmer"]
EN_PEOPLE = ["the children", "the farmers", "the people in the town", "my neighbours",
             "the students", "the old men", "the shop owners"]
EN_REACTION = ["stay at home", "take an umbrella", "wear a warm coat", "go to the park",
               "open the windows", "close the windows", "walk to the river", "stay inside"]

EN_COOKS = ["my mother", "my father", "the cook", "my grandmother", "my brother", "the baker",
            "my aunt", "my uncle"]
EN_DISHES = ["soup", "a stew", "a cake", "bread", "rice", "noodles", "a pie", "a salad",
             "dumplings"]
EN_VEG = ["carrots", "potatoes", "onions", "tomatoes", "beans", "mushrooms", "apples",
          "peppers"]
EN_LIQUID = ["water", "milk", "oil", "butter", "salt", "sugar", "pepper"]
EN_TASTE = ["good", "sweet", "hot", "rich", "fresh", "lovely", "perfect", "delicious"]

EN_KIDS = ["Anna", "Ben", "Lily", "Sam", "Emma", "Jack", "Mia", "Leo"]
EN_SUBJECTS = ["maths", "music", "history", "art", "reading", "science", "English"]
EN_KID_TRAITS = ["kind", "clever", "quiet", "funny", "busy", "happy"]
EN_SCHOOL_DO = ["reads a book", "writes a story", "draws a tree", "sings a song",
                "counts to twenty", "plays a game", "learns a new word", "paints a bird"]


def en_story_cat(w):
    rng = w.rng
    name, colour, owner = rng.choice(EN_CAT_NAMES), rng.choice(EN_COLOURS), rng.choice(EN_OWNERS)
    article = "an" if colour[0] in "aeiou" else "a"
    w.say(lambda: f"{name} is {article} {colour} cat.")
    w.say(lambda: f"{name} likes to sleep on {rng.choice(EN_SPOTS)}.")
    w.say(lambda: f"Every morning, {name} {rng.choice(EN_CAT_MORNING)}.")
    w.say(lambda: f"The cat is {rng.choice(EN_CAT_FEEL)} and the house is quiet.")
    if rng.random() < 0.6:
        w.say(lambda: f"When it rains, {name} stays on {rng.choice(EN_SPOTS)}.")
    w.say(lambda: f"In the evening, {name} {rng.choice(EN_CAT_EVENING)}.")
    w.say(lambda: f"{owner.capitalize()} loves {name}, and {name} loves {owner}.")


def en_story_weather(w):
    rng = w.rng
    sky, part = rng.choice(EN_SKY), rng.choice(EN_PART)
    w.say(lambda: f"Today the sky is {sky}.")
    w.say(lambda: f"The wind is {rng.choice(EN_WIND)} and the air is {rng.choice(EN_AIR)}.")
    w.say(lambda: f"In the {part}, it will {rng.choice(EN_EVENT)}.")
    w.say(lambda: f"{rng.choice(EN_PEOPLE).capitalize()} {rng.choice(EN_REACTION)}.")
    if rng.random() < 0.6:
        w.say(lambda: f"The sky is {sky} and the wind is {rng.choice(EN_WIND)}.")
    w.say(lambda: f"Tomorrow the sky will be {rng.choice(EN_SKY)} and it will "
                  f"{rng.choice(EN_EVENT)}.")


def en_story_kitchen(w):
    rng = w.rng
    cook, dish, veg = rng.choice(EN_COOKS), rng.choice(EN_DISHES), rng.choice(EN_VEG)
    w.say(lambda: f"In the kitchen, {cook} makes {dish}.")
    w.say(lambda: f"First, {cook} washes the {veg}.")
    w.say(lambda: f"Then {cook} cuts the {veg} into small pieces.")
    w.say(lambda: "The {} go into a pot with {} and {}.".format(veg, *rng.sample(EN_LIQUID, 2)))
    w.say(lambda: f"After {rng.choice(['ten', 'twenty', 'thirty', 'forty'])} minutes, "
                  f"the kitchen smells {rng.choice(EN_TASTE)}.")
    w.say(lambda: f"Everyone says the food is {rng.choice(EN_TASTE)}.")


def en_story_school(w):
    rng = w.rng
    kid, subject = rng.choice(EN_KIDS), rng.choice(EN_SUBJECTS)
    w.say(lambda: f"{kid} goes to school every day.")
    w.say(lambda: "{} likes {} and {}.".format(kid, *rng.sample(EN_SUBJECTS, 2)))
    w.say(lambda: f"In the {subject} class, {kid} {rng.choice(EN_SCHOOL_DO)}.")
    w.say(lambda: f"The teacher says {kid} is {rng.choice(EN_KID_TRAITS)}.")
    w.say(lambda: f"After school, {kid} {rng.choice(EN_SCHOOL_DO)} at home.")


EN_STORIES = [(en_story_cat, 3), (en_story_weather, 2), (en_story_kitchen, 2),
              (en_story_school, 2)]

ZH_CAT_NAMES = ["咪咪", "花花", "小白", "小黑", "豆豆", "球球", "团团", "毛毛"]
ZH_CAT_LOOK = ["白色的", "黑色的", "灰色的", "橘色的", "胖胖的", "小小的", "毛茸茸的"]
ZH_CAT_SPOTS = ["沙发上", "床上", "椅子上", "窗台上", "地毯上", "纸箱里", "阳台上"]
ZH_CAT_MORNING = ["喝一点牛奶", "吃早饭", "洗脸", "追着小球跑", "看窗外的小鸟", "在门口等人",
                  "晒太阳"]
ZH_CAT_EVENING = ["在沙发上睡觉", "看着窗外", "玩毛线球", "跳到床上", "等着吃晚饭"]
ZH_OWNERS = ["小女孩", "小男孩", "奶奶", "爷爷", "妈妈", "姐姐", "弟弟"]

ZH_WEATHER = ["是晴天", "是阴天", "多云", "下雨", "下雪", "有雾", "刮大风"]
ZH_WEATHER_CHANGE = ["下雨", "下雪", "刮风", "变冷", "变暖", "出太阳"]
ZH_SKY = ["很蓝", "灰蒙蒙的", "很亮", "很暗", "很干净"]
ZH_WIND = ["很大", "很小", "很冷", "很暖和", "很轻"]
ZH_PEOPLE = ["孩子们", "老人们", "学生们", "邻居们", "农民们", "路上的人"]
ZH_REACT = ["待在家里", "带上雨伞", "穿上厚衣服", "去公园散步", "打开窗户", "关上窗户",
            "去河边走走"]

ZH_COOKS = ["妈妈", "爸爸", "奶奶", "爷爷", "姐姐", "哥哥", "厨师"]
ZH_DISHES = ["汤", "面条", "饺子", "米饭", "蛋糕", "包子", "炒菜"]
ZH_VEG = ["土豆", "西红柿", "白菜", "胡萝卜", "青菜", "鸡蛋", "豆腐"]
ZH_TASTE = ["很香", "很好吃", "很甜", "很鲜", "很烫", "刚刚好"]

ZH_FIELDS = ["深度学习", "机器学习", "自然语言处理", "数学", "编程", "计算机科学", "统计学"]
ZH_LEARN_WITH = ["电脑", "书", "笔记本", "在线课程", "小组讨论"]
ZH_FRIENDS = ["小明", "小红", "小李", "小王", "小张", "小刘"]
ZH_HOURS = ["一", "两", "三", "四", "五"]


def zh_story_learning(w):
    rng = w.rng
    field, friend = rng.choice(ZH_FIELDS), rng.choice(ZH_FRIENDS)
    w.say(lambda: f"我喜欢{field}。")
    w.say(lambda: f"{field}很{rng.choice(['有意思', '有用', '难', '神奇', '重要'])}。")
    w.say(lambda: f"我每天学习{rng.choice(ZH_HOURS)}个小时{field}。")
    w.say(lambda: f"我用{rng.choice(ZH_LEARN_WITH)}学习{field}。")
    w.say(lambda: f"我的朋友{friend}也喜欢{rng.choice(ZH_FIELDS)}。")
    w.say(lambda: f"我和{friend}一起学习{rng.choice(ZH_FIELDS)}。")
    if rng.random() < 0.5:
        w.say(lambda: f"我们觉得{rng.choice(ZH_FIELDS)}很{rng.choice(['有意思', '有用', '难'])}。")


def zh_story_cat(w):
    rng = w.rng
    name, owner = rng.choice(ZH_CAT_NAMES), rng.choice(ZH_OWNERS)
    w.say(lambda: f"{name}是一只{rng.choice(ZH_CAT_LOOK)}小猫。")
    w.say(lambda: f"{name}喜欢在{rng.choice(ZH_CAT_SPOTS)}睡觉。")
    w.say(lambda: f"每天早上，{name}{rng.choice(ZH_CAT_MORNING)}。")
    if rng.random() < 0.6:
        w.say(lambda: f"下雨的时候，{name}待在{rng.choice(ZH_CAT_SPOTS)}。")
    w.say(lambda: f"晚上，{name}{rng.choice(ZH_CAT_EVENING)}。")
    w.say(lambda: f"{owner}很喜欢{name}，{name}也很喜欢{owner}。")


def zh_story_weather(w):
    rng = w.rng
    weather = rng.choice(ZH_WEATHER)
    w.say(lambda: f"今天{weather}。")
    w.say(lambda: f"天空{rng.choice(ZH_SKY)}，风{rng.choice(ZH_WIND)}。")
    w.say(lambda: f"{rng.choice(['上午', '下午', '晚上'])}可能会{rng.choice(ZH_WEATHER_CHANGE)}。")
    w.say(lambda: f"{rng.choice(ZH_PEOPLE)}{rng.choice(ZH_REACT)}。")
    w.say(lambda: f"明天{rng.choice(ZH_WEATHER)}，{rng.choice(ZH_PEOPLE)}"
                  f"{rng.choice(ZH_REACT)}。")


def zh_story_kitchen(w):
    rng = w.rng
    cook, dish, veg = rng.choice(ZH_COOKS), rng.choice(ZH_DISHES), rng.choice(ZH_VEG)
    w.say(lambda: f"{cook}在厨房里做{dish}。")
    w.say(lambda: f"{cook}先洗{veg}，然后把{veg}切成小块。")
    w.say(lambda: f"{cook}把{veg}放进锅里，加一点{rng.choice(['水', '油', '盐', '糖', '酱油'])}。")
    w.say(lambda: f"过了{rng.choice(['十', '二十', '三十'])}分钟，{dish}做好了。")
    w.say(lambda: f"大家都说{dish}{rng.choice(ZH_TASTE)}。")


ZH_STORIES = [(zh_story_learning, 3), (zh_story_cat, 2), (zh_story_weather, 2),
              (zh_story_kitchen, 2)]

LM_TARGET_BYTES = {"train": 45000, "valid": 4500, "test": 4500}


def build_lm_corpus(stories, joiner, seed):
    rng = random.Random(seed)
    texts = {}
    sentence_sets = {}
    for split in LM_SPLIT_BUCKETS:
        paragraphs, size = [], 0
        while size < LM_TARGET_BYTES[split]:
            sentences = write_story(rng, split, weighted(rng, stories))
            if len(sentences) < 3:
                continue
            paragraph = joiner.join(sentences)
            paragraphs.append(paragraph)
            size += len(paragraph.encode("utf-8")) + 1
            sentence_sets.setdefault(split, set()).update(sentences)
        texts[split] = "\n".join(paragraphs) + "\n"
    assert not sentence_sets["train"] & sentence_sets["valid"]
    assert not sentence_sets["train"] & sentence_sets["test"]
    assert not sentence_sets["valid"] & sentence_sets["test"]
    return texts, {k: len(v) for k, v in sentence_sets.items()}


def build_lm():
    stats = {}
    for lang, stories, joiner, seed in (("en", EN_STORIES, " ", 4401),
                                        ("zh", ZH_STORIES, "", 4402)):
        texts, distinct = build_lm_corpus(stories, joiner, seed)
        names = {"train": f"lm/{lang}.txt", "valid": f"lm/{lang}_valid.txt",
                 "test": f"lm/{lang}_test.txt"}
        for split, text in texts.items():
            write_text(names[split], text)
            stats[names[split]] = {"paragraphs": text.count("\n"),
                                   "bytes": len(text.encode("utf-8")),
                                   "chars": len(text), "words": len(text.split()),
                                   "distinct_sentences": distinct[split]}
    write_lm_readme(stats)
    return stats


def write_lm_readme(stats):
    lines = [
        "# Toy language-model corpora (English and Chinese)",
        "",
        "Short stories about a cat, the weather, cooking in a kitchen and going to",
        "school (English), and about learning (`我喜欢深度学习。`), a cat, the weather and",
        "a kitchen (Chinese). Each story comes from a small grammar in",
        "`data/make_toy_data.py`; names and objects recur inside a story and sentence",
        "shapes recur across stories, so a recurrent language model's perplexity drops",
        "clearly as it trains.",
        "",
        "## Format",
        "",
        "Plain UTF-8 text, LF line endings, one paragraph (one story) per line. English",
        "is ordinary sentences with capitals and punctuation separated by single spaces;",
        "Chinese has no spaces and full-width punctuation (，。). Readers should also",
        "accept blank lines, although these files have none.",
        "",
        "| file | split | paragraphs | distinct sentences | words (split on spaces) "
        "| characters | bytes |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, s in stats.items():
        split = "train" if "_" not in name else name.rsplit("_", 1)[1][:-4]
        words = s["words"] if name.startswith("lm/en") else "-"
        lines.append(f"| `{name[3:]}` | {split} | {s['paragraphs']} "
                     f"| {s['distinct_sentences']} | {words} | {s['chars']} "
                     f"| {s['bytes']} |")
    lines += [
        "",
        "The splits share no sentence: every distinct sentence belongs to one split",
        "by the MD5 of its text (80% train, 10% valid, 10% test), and each story only",
        "uses sentences of its own split. Validation and test stories are therefore",
        "new combinations of words the training text uses.",
        "",
        "## How it was made",
        "",
        "`python3 data/make_toy_data.py` (standard library only, fixed seeds) rewrites",
        "every file byte for byte.",
        "",
        f"License: {LICENSE}.",
        "",
    ]
    write_text("lm/README.md", "\n".join(lines))


# ----------------------------------------------------------------------------
# 5. Overview
# ----------------------------------------------------------------------------


def write_overview():
    rows = []
    for lang in ("en", "zh"):
        for split in SPLITS:
            p = f"sentiment/{lang}/{split}.csv"
            rows.append((p, f"{count_lines(p) - 1} rows", "CSV, header `text,label`; "
                         "labels `positive`/`negative`"))
    for split in SPLITS:
        p = f"tagging/en/{split}.conll"
        n = (DATA_DIR / p).read_text(encoding="utf-8").count("\n\n") - 1
        rows.append((p, f"{n} sentences", "CoNLL: `token TAG` per line, blank line between "
                     "sentences, `-DOCSTART- O` first; IOB2 PER/ORG/LOC/MISC"))
    for split in SPLITS:
        p = f"tagging/zh/{split}.txt"
        n = (DATA_DIR / p).read_text(encoding="utf-8").count("\n\n")
        rows.append((p, f"{n} sentences", "`字 TAG` per line, blank line between sentences; "
                     "IOB2 PER/ORG/LOC"))
    for split in SPLITS:
        p = f"translation/en-zh/{split}.tsv"
        rows.append((p, f"{count_lines(p)} pairs", "`english<TAB>chinese`, no header"))
    for lang in ("en", "zh"):
        for suffix in ("", "_valid", "_test"):
            p = f"lm/{lang}{suffix}.txt"
            rows.append((p, f"{count_lines(p)} paragraphs", "plain text, one paragraph "
                         "per line"))
    lines = [
        "# Toy datasets",
        "",
        "Small datasets written for elman, used by the demo, the tests and the default",
        "configs. Every sentence comes from the grammars in `make_toy_data.py`",
        "(standard library only, fixed seeds); running `python3 data/make_toy_data.py`",
        "rewrites all files byte for byte. All files are UTF-8 with LF line endings.",
        "Splits never share a sentence. Each folder has a README card with details.",
        "",
        "| dataset | file | size | bytes | format |",
        "|---|---|---|---|---|",
    ]
    for p, size, fmt in rows:
        lines.append(f"| {p.split('/')[0]} | `{p}` | {size} | {file_size(p)} | {fmt} |")
    lines += [
        "",
        "Cards: [sentiment](sentiment/README.md), [tagging](tagging/README.md),",
        "[translation](translation/README.md), [lm](lm/README.md).",
        "",
        f"License of all toy data: {LICENSE}.",
        "",
    ]
    write_text("README.md", "\n".join(lines))


def main():
    build_sentiment()
    build_tagging()
    build_translation()
    build_lm()
    write_overview()


if __name__ == "__main__":
    main()
