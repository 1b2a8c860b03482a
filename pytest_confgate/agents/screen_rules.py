"""What the screen (``screen``) counts as text aimed at an LLM evaluator: the kinds of hit,
how text is normalised before it is read, and the patterns. Kept apart from the scanning so
that a reviewer can read the rules in one place; each pattern has a test in
``tests/unit/test_screen.py`` and none may fire on ``tests/data/benign_diffs/``.

Text is read as it would be by a model: invisible characters dropped, compatibility forms
(fullwidth, mathematical letters) and accents folded, Cyrillic and Greek look-alikes read as
Latin for the English patterns. Pure: no IO.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

ROLE, OVERRIDE, DIRECTIVE, ANSWER, FENCE, HIDDEN = (
    "role marker",
    "override",
    "verdict directive",
    "answer imitation",
    "fence imitation",
    "hidden characters",
)


# --- hidden characters and normalisation --------------------------------------------------

_BIDI = frozenset(range(0x202A, 0x202F)) | frozenset(range(0x2066, 0x206A))
_INVISIBLE = frozenset(
    [0x200B, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0x180E, 0x034F, 0x115F, 0x1160, 0x3164,
     0xFFA0, 0x17B4, 0x17B5]
)  # fmt: skip
_JOINERS = frozenset([0x00AD, 0x200C, 0x200D, 0x200E, 0x200F, 0x061C])
"""Legitimate between emoji or in Arabic, Persian or Indic text; hidden between ASCII."""


def is_hidden(char: str) -> bool:
    """Whether ``char`` is invisible or reorders text: dropped before reading, spelled out
    when shown."""
    code = ord(char)
    return (
        code in _BIDI
        or code in _INVISIBLE
        or code in _JOINERS
        or code == 0xFEFF
        or 0xE0000 <= code <= 0xE007F  # tag characters: invisible ASCII an LLM still reads
        or 0xE0100 <= code <= 0xE01EF  # variation selectors 17-256: used to smuggle bytes
    )


def hidden_characters(text: str) -> bool:
    """Whether ``text`` hides something: bidi controls always; other invisibles in context."""
    for index, char in enumerate(text):
        code = ord(char)
        if code in _BIDI or code in _INVISIBLE or 0xE0100 <= code <= 0xE01EF:
            return True
        if code == 0xFEFF and index > 0:  # a byte-order mark belongs at the start only
            return True
        if 0xE0000 <= code <= 0xE007F and not _in_flag(text, index):
            return True
        if code in _JOINERS and _between_ascii(text, index):
            return True
    return False


def _in_flag(text: str, index: int) -> bool:
    """Tag characters are legitimate in a subdivision flag: U+1F3F4 followed by tags."""
    start = index
    while start > 0 and 0xE0000 <= ord(text[start - 1]) <= 0xE007F:
        start -= 1
    return start > 0 and text[start - 1] == "\U0001f3f4"


def _between_ascii(text: str, index: int) -> bool:
    before = text[index - 1] if index > 0 else " "
    after = text[index + 1] if index + 1 < len(text) else " "
    return before.isascii() and before.isalnum() and after.isascii() and after.isalnum()


def fold(text: str) -> str:
    """``text`` as a model reads it: invisible characters dropped, compatibility forms
    (fullwidth, mathematical letters) and accents folded; the case is kept."""
    visible = "".join(char for char in text if not is_hidden(char))
    decomposed = unicodedata.normalize("NFKD", visible)
    bare = "".join(char for char in decomposed if unicodedata.category(char) != "Mn")
    return unicodedata.normalize("NFKC", bare)


LOOKALIKES = str.maketrans(
    "\u0430\u0435\u0451\u043e\u0440\u0441\u0443\u0445\u0456\u0457\u0458\u0455"
    "\u0501\u051b\u051d\u04bb\u04cf\u043a\u0578\u057d\u03b1\u03b5\u03b9\u03ba"
    "\u03bd\u03bf\u03c1\u03c4\u03c5\u03c7\u0261\u0269\u0131\u029f\u1d04\u1d0f",
    "aeeopcyxiijsdqwhlknuaeikvoptuxgiilco",
)
"""Cyrillic, Greek and other letters that look Latin (Cyrillic a e o p c y x i j s d q w h,
Armenian n u, Greek a e i k v o p t u x, script g, dotless i...): ``ign\u043ere``."""


def words(text: str) -> str:
    """The folded text as words separated by one space: punctuation and markup drop out.

    A word is a run of letters, marks and digits (so Devanagari vowel signs stay inside it).
    """
    words: list[str] = []
    current: list[str] = []
    for char in fold(text).casefold():
        if unicodedata.category(char)[0] in "LMN":
            current.append(char)
        elif current:
            words.append("".join(current))
            current = []
    if current:
        words.append("".join(current))
    return " ".join(words)
# --- patterns on each line ------------------------------------------------------------------

_ORDER_WORDS = (
    r"\b(?:you|your|ignore|disregard|instruction|score|rate|rating|approve|pass|must|"
    r"respond|answer|output|return|judge|evaluat|grade)"
)
_LINE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        ROLE,
        re.compile(
            r"<\|\s*/?\s*(?:im_start|im_end|im_sep|system|user|assistant|endoftext|eot_id|"
            r"start_header_id|end_header_id|begin_of_text|end_of_turn|start_of_turn)\s*\|>"
            r"|\[/?INST\]|<</?SYS>>|<start_of_turn>|<end_of_turn>",
            re.IGNORECASE,
        ),
    ),
    (
        ROLE,
        re.compile(
            r"\b(?:SYSTEM|ASSISTANT|DEVELOPER)(?:\s+(?:PROMPT|MESSAGE))?\s*:"
            r"(?!\s*(?:str|int|Final|ClassVar|Literal|dict|list|tuple)\b)"
        ),
    ),
    (
        ROLE,
        re.compile(
            r"^\W*(?:System|Assistant|Human|Developer|SYSTEM|ASSISTANT|HUMAN|DEVELOPER)"
            rf"(?:\s+(?:prompt|message|instructions?))?\s*:(?=(?i:.*{_ORDER_WORDS}))"
        ),
    ),
    (ROLE, re.compile(r"^\W*#{2,}\s*(?:instruction|instructions|response|system)\s*:", re.I)),
    (
        ROLE,
        re.compile(
            r"\b(?:system|developer)\s+(?:prompt|message|instructions?)\s+"
            r"(?:override|overridden|update|updated|changed|begins|starts)\b",
            re.IGNORECASE,
        ),
    ),
    (
        OVERRIDE,
        re.compile(
            r"\b(?:real|actual|true|hidden|secret|new\s+system|updated\s+system)\s+"
            r"(?:instructions?|directives?|orders)\s*:",
            re.IGNORECASE,
        ),
    ),
    (
        FENCE,
        re.compile(
            r"<<<\s*(?:end[-_ ]?)?data\b|\b(?:end[-_ ])?data[-_][0-9a-f]{6,}\s*>>>"
            r"|</?\s*(?:untrusted[-_ ]?\w*|user[-_]input|data[-_]section|system[-_]prompt|"
            r"instructions)\s*>|\bend\s+of\s+(?:the\s+)?(?:untrusted|fenced)\s+(?:data|input|"
            r"section|text|content)\b",
            re.IGNORECASE,
        ),
    ),
    (
        ANSWER,
        re.compile(
            r"""\bcanary\b["']?\s*[:=]\s*["']?[0-9a-f]{8,}|["']canary["']\s*:\s*["']""",
            re.IGNORECASE,
        ),
    ),
    (ANSWER, re.compile(r"""["']\s*winner\s*["']\s*:\s*["']\s*(?:first|second)\b""", re.I)),
)


def line_kinds(text: str) -> list[str]:
    kinds = [HIDDEN] if hidden_characters(text) else []
    plain = unicodedata.normalize("NFKC", "".join(c for c in text if not is_hidden(c)))
    kinds += [kind for kind, pattern in _LINE_PATTERNS if pattern.search(plain)]
    return kinds


# --- patterns over a whole source ------------------------------------------------------------

_ANSWER_KEYS = r"""["']?\s*(?:confidence|reasoning|canary|suggestions|verdict)\s*["']?\s*:"""
JOINED_PATTERNS = [
    (
        ANSWER,
        re.compile(
            rf"""["']\s*score\s*["']\s*:[^{{}}]{{0,200}}?{_ANSWER_KEYS}|"""
            rf"""["']\s*(?:confidence|reasoning|canary)\s*["']\s*:[^{{}}]{{0,200}}?"""
            r"""["']\s*score\s*["']\s*:|\bscore\s*[:=]\s*1(?:\.0+)?\b[^{}\n]{0,80}"""
            r"""\bconfidence\s*[:=]""",
            re.IGNORECASE,
        ),
    )
]
"""The judge's answer object, also when spread over lines (read with newlines kept)."""

_DETERMINER = r"(?:(?:all|any|every|each|of|the|your|my|our|these|those|this|previous) ){0,4}"
_EARLIER = (
    r"(?:previous|prior|above|preceding|earlier|foregoing|former|aforementioned|system)"
)
_ORDERS = (
    r"(?:instructions?|prompts?|rules|directions|directives?|guidelines?|guidance|commands|"
    r"orders|constraints|criteria|restrictions)"
)
_ENGLISH = [
    rf"\b(?:ignore|disregard|forget|neglect|discard|abandon) "
    rf"{_DETERMINER}{_EARLIER}(?: \w+)? {_ORDERS}\b",
    r"\b(?:override|overrule|bypass) (?:all |any |the |your )*(?:previous |prior |above |"
    r"system |original )(?:instructions?|prompts?|guidelines|directives)\b",
    rf"\b(?:ignore|disregard|forget|discard) {_DETERMINER}{_ORDERS} (?:above|so far|"
    rf"you were given|you have been given|from the system)\b",
    r"\b(?:ignore|disregard|forget) (?:everything|anything|all)(?: that| you were| you have "
    r"been)?(?: told| said| written| given| read)? (?:above|previously|so far)\b",
    r"\b(?:do not|don t|dont|never) (?:follow|obey|apply|use|heed) (?:the |your |any )?"
    rf"{_EARLIER} {_ORDERS}\b",
]
_DIRECTIVES = [
    r"\b(?:give|assign|award|grant|rate|grade|score|mark|judge|evaluate) (?:this|the|my|our) "
    r"(?:change|changes|pr|pull request|merge request|diff|patch|submission|commit|code|"
    r"solution|implementation)(?: \w+){0,4}? (?:1 0|1 00|10 10|100|5 5|full marks|perfect|"
    r"maximum|flawless|a pass|as passed|as passing|as approved)\b",
    r"\b(?:this|the) (?:change|changes|pr|pull request|diff|patch|submission|code|solution|"
    r"commit) (?:deserves|merits|earns|should get|should receive|should be given|must get|"
    r"must receive|must be given|must be rated|should be rated|must be scored|should be "
    r"scored|must pass|should pass|must be approved|should be approved)\b",
    r"\b(?:you|the (?:judge|evaluator|grader|model|llm|ai|assistant)|evaluators?|judges?|"
    r"graders?|llms?|language models?) (?:must|should|shall|will|have to|need to|are required "
    r"to|is required to|are expected to) (?:always )?(?:approve|pass|accept|greenlight|merge) "
    r"(?:this|it|the (?:change|pr|pull request|diff|code|patch|submission))\b",
    r"\b(?:give|assign|award|output|return|respond with|reply with|answer with) (?:it |this |"
    r"me |us )?(?:an? |the )?(?:perfect|maximum|max|highest|top|full) (?:possible )?(?:score|"
    r"rating|marks|grade)\b",
    r"\b(?:score|rating|grade|verdict) (?:must|should|shall|has to|needs to|will) (?:always )?"
    r"be (?:1 0|10 10|100|perfect|maximum|the maximum|highest|full|pass|passed|approved)\b",
    r"\b(?:dear|attention|note to|note for|message to|message for|instructions? for|hey|hi|"
    r"hello) (?:the |any |all )?(?:ai|llm|llms|language model|gpt|chatgpt|claude|gemini|"
    r"evaluators?|judges?|graders?|scorer|assistant|automated (?:reviewer|judge|evaluator)|ai "
    r"(?:reviewer|judge|evaluator|model|assistant))\b",
    r"\b(?:if you are|to any|to the) (?:an? )?(?:ai|llm|language model|automated reviewer|"
    r"ai reviewer|ai judge|ai evaluator) (?:reading|reviewing|evaluating|judging|scoring|"
    r"grading)\b",
    r"\b(?:from now on you|you are now|you re now) (?:must |will |should |are )?(?:always )?"
    r"(?:an? |the )?(?:approve|pass|score|rate|give|output|respond|answer|ignore|obey|judge|"
    r"evaluator|grader|assistant|unrestricted|in developer mode)\b",
    r"\b(?:your new (?:task|role|instructions|job|goal) (?:is|are)|roleplay as|dan mode|"
    r"developer mode enabled)\b",
    r"\b(?:you are|you re) (?:no longer|not) (?:an? |the )?(?:judge|evaluator|reviewer|"
    r"grader|assistant)\b",
]
_OTHER_LANGUAGES = [
    # German, French, Spanish, Portuguese, Italian, Dutch, Polish, Turkish (accents folded)
    r"\b(?:ignorier\w*|vergiss|vergessen sie|missacht\w*) (?:\w+ ){0,3}(?:vorherig\w*|"
    r"bisherig\w*|obig\w*|vorig\w*|fruher\w*|vorangegangen\w*|ursprunglich\w*) (?:\w+ )?"
    r"(?:anweisung\w*|instruktion\w*|befehl\w*|regeln|vorgaben)\b",
    r"\b(?:ignore[rz]?|oublie[rz]?|neglige[rz]?) (?:\w+ ){0,3}(?:instructions|consignes|"
    r"directives|regles|ordres)(?: \w+)? (?:precedent\w*|ci dessus|anterieur\w*|d avant)\b",
    r"\b(?:ignora|ignore|ignorad|ignoren|olvida|olvide|descarta) (?:\w+ ){0,3}(?:instrucciones|"
    r"indicaciones|ordenes|reglas)(?: \w+)? (?:anteriores|previas|de arriba|precedentes)\b",
    r"\b(?:ignore|ignora|esqueca|esquece|desconsidere) (?:\w+ ){0,3}(?:instrucoes|ordens|"
    r"regras|orientacoes)(?: \w+)? (?:anteriores|previas|acima)\b",
    r"\b(?:ignora|ignorate|dimentica|dimenticate) (?:\w+ ){0,3}(?:istruzioni|regole|"
    r"indicazioni)(?: \w+)? (?:precedenti|sopra|anteriori)\b",
    r"\b(?:negeer|vergeet) (?:\w+ ){0,3}(?:vorige|eerdere|voorgaande|bovenstaande) "
    r"(?:instructies|opdrachten|regels)\b",
    r"\b(?:zignoruj|ignoruj|zapomnij) (?:\w+ ){0,3}(?:poprzednie|wczesniejsze|powyzsze) "
    r"(?:instrukcje|polecenia)\b",
    r"\b(?:onceki|yukaridaki) (?:\w+ ){0,2}talimat\w* (?:\w+ )?(?:yok say|gormezden gel|unut)",
    r"(?:игнорируй\w*|забудь\w*|проигнорируй\w*|не обращай\w* внимания на|ігноруй\w*) "
    r"(?:\w+ ){0,3}(?:предыдущ\w*|прежн\w*|вышеуказанн\w*|вышеприведенн\w*|предшествующ\w*|"
    r"попередн\w*) (?:инструкц\w*|указан\w*|команд\w*|правил\w*|інструкц\w*|вказів\w*)",
    r"تجاهل (?:\w+ ){0,2}(?:التعليمات|الأوامر) السابق\w*",
]
"""German, French, Spanish, Portuguese, Italian, Dutch, Polish, Turkish, Russian, Ukrainian,
Arabic; written as spoken, folded like the text before use."""
_SQUASHED_ENGLISH = [
    r"(?:ignore|disregard|forget)(?:all|any|every)?(?:of)?(?:the|your|my|these|those)?"
    r"(?:previous|prior|above|preceding|earlier|foregoing|system|original)"
    r"(?:instructions?|prompts?|rules|directions|directives|guidelines)",
]
_SQUASHED_OTHER = [
    r"(?:忽略|无视|忽视|無視|不要理会|不要理會|忘记|忘記|忘掉)(?:你)?(?:之前|以前|先前|上面|上述|以上|前面|所有)"
    r"(?:所有)?(?:的)?(?:所有)?(?:的)?(?:指令|指示|说明|說明|规则|規則|提示|要求)",
    r"(?:以前|前|上記|これまで|今まで)の(?:すべての|全ての)?(?:指示|命令|指令|ルール)(?:を|は)?(?:無視|忘れ)",
    r"(?:이전|위|앞)(?:의)?(?:모든)?(?:지시|명령|지침)(?:사항)?(?:을|를|은|는)?(?:무시|잊)",
    r"पिछले.{0,3}निर्देश.{0,6}(?:अनदेखा|नजरअंदाज|उपेक्षा)",
]
"""Chinese (simplified and traditional), Japanese, Korean, Hindi: no spaces to rely on."""


WORD_PATTERNS = [(OVERRIDE, re.compile(p)) for p in _ENGLISH] + [
    (DIRECTIVE, re.compile(p)) for p in _DIRECTIVES
]
NATIVE_WORD_PATTERNS = [(OVERRIDE, re.compile(fold(p))) for p in _OTHER_LANGUAGES]
SQUASHED_PATTERNS = [(OVERRIDE, re.compile(p)) for p in _SQUASHED_ENGLISH]
NATIVE_SQUASHED_PATTERNS = [(OVERRIDE, re.compile(fold(p))) for p in _SQUASHED_OTHER]

Patterns = Sequence[tuple[str, re.Pattern[str]]]
