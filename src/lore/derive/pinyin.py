"""Pinyin of a note's names (title, aliases, file name, entity names) and tags, so a name
can be found as people type it when they remember how it sounds: "zhangsan", "zhang san",
"zs", "shujuku".

A name becomes a row of *units*, one per token of the index's stream (a Chinese character,
a Latin word), each with its readings: the reading in context first (pypinyin's phrase
dictionary: 银行 → yin hang, 重庆 → chong qing), then, for a character the phrases left
undecided, its other common readings (重 → zhong, chong; 行 → xing, hang), at most
MAX_READINGS. ü is written v (lv, nv) as pinyin keyboards do, and u as well.

Candidate keys make a query word find the names it can spell (lore.retrieve.pinyin matches
them exactly): for each run of Chinese characters, the pinyin of every suffix of the run
joined up ("kehuquchongguize", "huquchongguize", ...) and its initials ("khqcgz", "hqcgz",
...), in a few reading variants (every combination for a short name); a query word is
looked up as a prefix of them, so "quchong" and "qc" both find 客户去重规则. pypinyin is
imported only when a name with Chinese characters is derived (~1 s); a search never loads
it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from itertools import combinations, product
from typing import Any, NamedTuple

from .fold import fold_char
from .tokenize import is_cjk_char, normalize_word

MAX_READINGS = 2  # per character: pypinyin lists the common ones first
MAX_VARIANTS = 8  # reading variants of each suffix's keys
MAX_KEY = 48  # characters of a key: longer query words than that are not pinyin
_RUN = re.compile(r"[^\W_]+")
# Every reading a unit can have: pypinyin's syllables without tones (ü as v), and u for v
# (_with_u); its one reading that is not ASCII (ê) no query word can type. A query word
# that no run of these spells spells no name (lore.retrieve.pinyin.may_spell), so a
# search need not read the names' pinyin for it. tests/unit/test_pinyin.py checks the list
# against pypinyin's dictionaries.
SYLLABLES = frozenset(
    """a ai an ang ao ba bai ban bang bao bei ben beng bi bian biang biao bie bin bing bo bong
    bu ca cai can cang cao ce cei cen ceng cha chai chan chang chao che chen cheng chi chong
    chou chu chua chuai chuan chuang chui chun chuo ci cong cou cu cuan cui cun cuo da dai
    dan dang dao de dei den deng di dia dian diao die din ding diu dong dou du duan dui dun
    duo e ei en eng er fa fan fang fei fen feng fiao fo fou fu ga gai gan gang gao ge gei
    gen geng gong gou gu gua guai guan guang gui gun guo ha hai han hang hao he hei hen heng
    hm hng hong hou hu hua huai huan huang hui hun huo ji jia jian jiang jiao jie jin jing
    jiong jiu ju juan jue jun ka kai kan kang kao ke kei ken keng kong kou ku kua kuai kuan
    kuang kui kun kuo la lai lan lang lao le lei len leng li lia lian liang liao lie lin
    ling liu lo long lou lu luan lue lun luo lv lve m ma mai man mang mao me mei men meng mi
    mian miao mie min ming miu mo mou mu n na nai nan nang nao ne nei nen neng ng ni nia
    nian niang niao nie nin ning niu nong nou nu nuan nue nun nuo nv nve o ou pa pai pan
    pang pao pei pen peng pi pian piao pie pin ping po pou pu qi qia qian qiang qiao qie qin
    qing qiong qiu qu quan que qun ran rang rao re ren reng ri rong rou ru rua ruan rui run
    ruo sa sai san sang sao se sen seng sha shai shan shang shao she shei shen sheng shi
    shou shu shua shuai shuan shuang shui shun shuo si song sou su suan sui sun suo ta tai
    tan tang tao te tei teng ti tian tiao tie ting tong tou tu tuan tui tun tuo wa wai wan
    wang wei wen weng wo wong wu xi xia xian xiang xiao xie xin xing xiong xiu xu xuan xue
    xun ya yan yang yao ye yi yin ying yo yong you yu yuan yue yun za zai zan zang zao ze
    zei zen zeng zha zhai zhan zhang zhao zhe zhei zhen zheng zhi zhong zhou zhu zhua zhuai
    zhuan zhuang zhui zhun zhuo zi zong zou zu zuan zui zun zuo""".split()
)


class Unit(NamedTuple):
    """One token of a name: a Chinese character with its readings, or another token that
    only matches itself (`readings` empty). A NamedTuple: a search decodes hundreds."""

    readings: tuple[str, ...]
    literal: str  # the token as the index writes it (a folded character, a word)


def encode_units(units: list[Unit]) -> str:
    """Units as stored: space-separated `readings=token`, readings joined by '/' (a token
    never holds a space, '/' or '=')."""
    return " ".join("/".join(u.readings) + "=" + u.literal for u in units)


def decode_units(text: str) -> list[Unit]:
    out = []
    for item in text.split(" "):
        readings, _, literal = item.partition("=")
        out.append(Unit(tuple(readings.split("/")) if readings else (), literal))
    return out


@lru_cache(maxsize=1)
def _han() -> re.Pattern[str]:
    """A run of Han characters. Compiled when names are first read (indexing), not by a
    search: sre walks each BMP code point of the class's ranges (a millisecond or two)."""
    return re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134a]+")


@lru_cache(maxsize=1)
def _pypinyin() -> Any:
    import pypinyin  # deferred: ~1 s to import; only names with Chinese characters need it

    return pypinyin


@lru_cache(maxsize=20_000)
def _char_readings(char: str) -> tuple[str, tuple[str, ...]]:
    """(the reading alone, every reading) of one character, tones dropped."""
    p = _pypinyin()
    every = p.pinyin(char, style=p.Style.NORMAL, heteronym=True)[0]
    alone = p.lazy_pinyin(char)[0]
    return alone, tuple(dict.fromkeys(every))


def _with_u(reading: str) -> tuple[str, ...]:
    return (reading, reading.replace("v", "u")) if "v" in reading else (reading,)


def _han_units(run: str) -> list[Unit]:
    p = _pypinyin()
    context = p.lazy_pinyin(run)
    if len(context) != len(run):  # pypinyin kept something whole: read character by character
        context = [_char_readings(c)[0] for c in run]
    units = []
    for char, reading in zip(run, context, strict=True):
        alone, every = _char_readings(char)
        readings = [reading]
        if reading == alone:  # no phrase decided it: its other readings are as likely
            readings += [r for r in every if r != reading]
        spelled = [s for r in readings[:MAX_READINGS] for s in _with_u(r)]
        units.append(Unit(tuple(dict.fromkeys(spelled)), fold_char(char)))
    return units


def name_units(name: str) -> list[Unit]:
    """The units of a name, in order (see the module doc)."""
    units: list[Unit] = []
    for piece in _RUN.findall(name):
        at = 0
        for han in _han().finditer(piece):
            units += _literal_units(piece[at : han.start()])
            units += _han_units(han.group())
            at = han.end()
        units += _literal_units(piece[at:])
    return units


def _literal_units(text: str) -> list[Unit]:
    out: list[Unit] = []
    for word in _RUN.findall(text):
        if is_cjk_char(word[0]):  # kana: no pinyin, one unit per character as indexed
            out += [Unit((), fold_char(c)) for c in word]
        else:
            out += [Unit((), t) for t in normalize_word(word)]
    return out


def has_han(text: str) -> bool:
    return _han().search(text) is not None


def keys(units: list[Unit]) -> set[str]:
    """The candidate keys of a name: per run of units with readings, for each suffix of
    the run, its joined pinyin and its initials (single letters, and zh / ch / sh as typed
    by some), in up to MAX_VARIANTS reading variants of that suffix."""
    out: set[str] = set()
    for run in _reading_runs(units):
        for i in range(len(run)):
            suffix = run[i : i + MAX_KEY]  # a reading has a letter at least
            for variant in _variants(suffix):
                out.add("".join(variant)[:MAX_KEY])
                if len(variant) > 1:
                    out.add("".join(r[0] for r in variant)[:MAX_KEY])
                    out.add("".join(_initial(r) for r in variant)[:MAX_KEY])
    return out


def _initial(reading: str) -> str:
    return reading[:2] if reading[:2] in ("zh", "ch", "sh") else reading[0]


def _reading_runs(units: list[Unit]) -> Iterator[list[tuple[str, ...]]]:
    run: list[tuple[str, ...]] = []
    for unit in units:
        if unit.readings:
            run.append(unit.readings)
        elif run:
            yield run
            run = []
    if run:
        yield run


def _variants(run: list[tuple[str, ...]]) -> Iterator[list[str]]:
    """The first reading of every unit, then the others with one unit switched to another
    of its readings, then two, and so on, up to MAX_VARIANTS in all: a short name gets
    every combination (曾乐: zengle, cengle, zengyue, cengyue), a long title with many
    heteronyms does not multiply."""
    first = [r[0] for r in run]
    yield first
    made = 1
    mixed = [i for i, readings in enumerate(run) if len(readings) > 1]
    for switched in range(1, len(mixed) + 1):
        for where in combinations(mixed, switched):
            for others in product(*(run[i][1:] for i in where)):
                if made >= MAX_VARIANTS:
                    return
                variant = first.copy()
                for i, reading in zip(where, others, strict=True):
                    variant[i] = reading
                yield variant
                made += 1
