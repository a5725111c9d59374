"""Toy named-entity data: English CoNLL-style sentences and Chinese character-level NER.

Writes `tagging/en/{train,validation,test}.conll` ("token TAG", IOB2
PER/ORG/LOC/MISC), `tagging/zh/{train,validation,test}.txt` ("字 TAG", IOB2
PER/ORG/LOC) and the card `tagging/README.md`. Seeds 2201 (en) and 2202 (zh).
"""

import re

from .common import LICENSE, SPLITS, generate_splits, weighted, write_text
from .lm import EN_EVENT as LM_EN_EVENT


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
# What the EVENT slot has actually drawn: while all generators lived in one file, the
# language-model corpus's own EN_EVENT (weather phrases: "rain", "be foggy", ...) was
# defined later in it and rebound the name, so the published data/tagging/en files
# hold those as MISC. Kept so that the files stay byte for byte; drawing from
# EN_EVENT instead fixes the slot and changes data/tagging/en.
EN_EVENT_AS_DRAWN = LM_EN_EVENT
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
        return pick(EN_EVENT_AS_DRAWN, EN_EVENT_UNSEEN).split(), "MISC"
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
