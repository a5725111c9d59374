"""Toy language-model corpora: short English and Chinese stories, one paragraph per line.

Writes `lm/{en,zh}.txt`, `lm/{en,zh}_{valid,test}.txt` and the card
`lm/README.md`. Seeds 4401 (en) and 4402 (zh).
"""

import hashlib
import random

from .common import LICENSE, weighted, write_text


# Each paragraph is a short story from one of a few story grammars; the same
# names and objects recur inside a story, and sentence shapes recur across
# stories, so a recurrent LM's perplexity drops clearly. Every distinct sentence
# is assigned to one split by its MD5 hash, so the validation and test files
# never repeat a training sentence.

LM_SPLIT_BUCKETS = {"train": range(0, 16), "valid": range(16, 18), "test": range(18, 20)}


def md5_bucket(text, buckets):
    return int(hashlib.md5(text.encode("utf-8")).hexdigest(), 16) % buckets


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
