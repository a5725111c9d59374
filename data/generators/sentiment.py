"""Toy sentiment data: English and Chinese review sentences labelled positive/negative.

Writes `sentiment/{en,zh}/{train,validation,test}.csv` (header "text,label")
and the card `sentiment/README.md`. Seeds 1101 (en) and 1102 (zh).
"""

import csv
import io

from .common import LICENSE, SPLITS, generate_splits, weighted, write_text


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


def flip(polarity):
    return "negative" if polarity == "positive" else "positive"


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
