"""Refusal statements: what declining sounds like, bluntly or softly, in many languages.

A refusal is a *statement that the writer will not do what was asked*, not the presence of
apology words: "Sorry for the wait!" and "I won't judge you" decline nothing. The patterns
are built from two parts per language, a first-person negation of ability or will ("I can't",
"no puedo", "не могу", "我不能", "できません") and a helping verb a few words later ("help",
"ayudar", "помочь", "帮", "お手伝い"), plus the soft, idiomatic forms people use instead
("I'd rather not get into that", "I'll pass", "No. Sorry.").

Latin-script languages are matched on the `latin` view (accents dropped, lookalikes mapped),
the others on `native`. Languages: English, Spanish, Portuguese, French, German, Italian,
Dutch, Indonesian/Malay, Turkish, Vietnamese, Swahili and Tagalog in Latin script; Russian
and Ukrainian, Chinese, Japanese, Korean, Hindi, Urdu, Bengali, Arabic, Persian, Thai and
Hebrew in their own.
"""

from __future__ import annotations

import re

__all__ = ["LATIN", "NATIVE", "find_refusals"]

# ---- English -----------------------------------------------------------------------------------

# What follows "I": a negation of ability or will, or a soft way of declining.
_NEG = (r"(?:can't|cannot|can not|won't|will not|wont|shouldn't|should not|couldn't|could not|"
        r"mustn't|must not|'m unable to|am unable to|'m not able to|am not able to|"
        r"'m not going to|am not going to|'m not gonna|am not gonna|refuse to|must decline to|"
        r"have to decline to|would rather not|'d rather not|would prefer not to|"
        r"'d prefer not to|prefer not to|'d better not|'m not comfortable|am not comfortable|"
        r"don't feel comfortable|do not feel comfortable|'m not in a position to|"
        r"am not in a position to|'m not willing to|am not willing to|'ll not|will not be|"
        r"won't be|can't be|'ll refrain from|will refrain from|must refrain from|choose not to|"
        r"'ll have to pass on|'ll pass on|will pass on)")
# Verbs a negation must not govern for the sentence to be a refusal ("I can't wait to help").
_NOT_REFUSING = r"(?!wait\b|judge\b|lie\b|stress\b|emphasi[sz]e\b|believe\b|imagine\b|recommend\b)"
_HELP = (r"(?:help|helping|assist|assisting|provide|providing|give|giving|share|sharing|do|doing|"
         r"support|comply|fulfil|fulfill|create|write|writing|explain|explaining|tell|telling|"
         r"offer|generate|produce|describe|describing|walk|answer|answering|engage|participate|"
         r"detail|outline|instruct|teach|show|make|get into|go into|going into|getting into|"
         r"discuss|discussing|weigh in|touch|go there|continue|proceed|be of help|be helpful)")
_DONT_HELP = r"(?:help|assist|provide|share|give out|write|create|generate|engage|support|condone)"
_ENGLISH = [
    rf"\bi(?: \w+ly)?\s?{_NEG}\s+{_NOT_REFUSING}(?:[\w']+\s+){{0,3}}?{_HELP}\b",
    rf"\bi (?:don't|do not)\s+(?:[\w']+\s+){{0,2}}?{_DONT_HELP}\b",
    r"\bi\s?(?:can't|cannot|won't|will not|shouldn't)(?: do that| do this| go there)?[.!,]",
    r"\bi(?:\s(?:must|have to|need to|will|am going to)|'ll|'m going to)(?:\s(?:respectfully|"
    r"politely|have to|kindly|unfortunately))?\s(?:decline|refuse|pass)\b",
    r"\bi(?:'ll| will|'m going to| am going to|'d better| should) (?:sit this one out|"
    r"stay out of (?:this|that|it)|not (?:do|help|go there|touch|answer|assist|engage))\b",
    r"\bnot something (?:i|we)(?:'m| am| are)? (?:can|will|could|able|willing|going|comfortable)\b",
    r"\b(?:that|this|it)(?:'s| is) (?:not something|something) i (?:won't|can't|cannot|will not|"
    r"don't|do not|shouldn't|would rather not|'d rather not)\b",
    # "X isn't something I'll do": the negation on the thing, the will on the writer
    r"\b(?:isn't|is not|'s not|aren't|are not)\s+(?:something|anything|a thing|what)\s+"
    r"(?:i|we)(?:'ll|'d| will| would| can| could| am going to| want to)\s+(?:\w+\s+)?"
    r"(?:help|do|assist|provide|share|write|give|support|explain|go into|get into|answer)\b",
    r"\b(?:it is|it's|it would be|that would be|that's) not (?:appropriate|ethical|right|"
    r"responsible) (?:for me )?to\b",
    r"\b(?:it|that|this) (?:wouldn't|would not) be (?:appropriate|right|responsible)"
    r" (?:for me )?to\b",
    r"\bas an ai\b[^.]*\b(?:cannot|can't|won't|unable)\b",
    r"\bi(?:'m| am) (?:afraid|sorry),? (?:but )?(?:i|that|this)(?: is|'s)? ?(?:can't|cannot|"
    r"won't|not|isn't|is not|'m not|am not)\b",
    r"\bunable to (?:help|assist|provide|comply|share|answer)\b",
    r"\b(?:count me out|no can do|not going to happen|that's a no\b|(?:a )?hard (?:pass|no)\b|"
    r"i'm not touching (?:this|that)|let's not go there|i'll stop you there|"
    r"i'm going to stop you there|i'll have to say no|i have to say no|i must say no|"
    r"i'm going to say no|i'll say no)",
    r"\bi(?:'d| would| will|'ll)? (?:rather|prefer to) (?:not|stay away|steer clear|keep out)\b",
    r"\bi(?:'m| am) not (?:going|gonna|willing|able|comfortable|about) to\b(?! lie| pretend)",
    r"\bmy answer (?:is|has to be) no\b|\b(?:that's|this is|here's) where i draw the line\b",
    r"\b(?:not|isn't|is not)\b[\w ']{0,30}?\bi(?:'m| am) (?:willing|prepared|comfortable|happy|"
    r"able|going) to\b",
    # "No." / "Nope." as a sentence of its own, with an apology or a refusal close by
    r"(?:^|[.!?\n]\s*)(?:no|nope|nah)[.!,]\s*(?:\w+\W+){0,6}?(?:sorry|apologi[sz]e|"
    r"afraid|rather not|not comfortable|i can't|i won't)\b",
    r"\b(?:sorry|apologies)[,.!]?\s+(?:but\s+)?(?:no|nope)\b[.!]",
    r"^\W*(?:no|nope|nah|no thanks|no thank you)\W*$",
]

# ---- other languages in Latin script (matched on the accent-free `latin` view) ------------------

_LATIN_OTHER = [
    # Spanish
    r"\bno (?:puedo|podre|podria|voy a|pienso|debo|quiero|me es posible|estoy en condiciones de)"
    r"(?:\s+\w+){0,3}?\s+(?:ayud\w*|proporcion\w*|dar\w*|hacer\w*|explic\w*|compart\w*|asist\w*|"
    r"colabor\w*|respond\w*|facilit\w*|particip\w*|ofrec\w*|brindar\w*|eso|esto|con)\b",
    r"\b(?:me niego|debo negarme|prefiero no|no es algo que (?:pueda|vaya a))\b",
    r"\blo siento,? (?:pero )?no\b",
    # Portuguese
    r"\bnao (?:posso|poderei|poderia|vou|consigo|devo|quero|sou capaz de|estou em condicoes de)"
    r"(?:\s+\w+){0,3}?\s+(?:ajud\w*|fornec\w*|dar\w*|fazer\w*|explic\w*|compartilh\w*|"
    r"assist\w*|colabor\w*|respond\w*|particip\w*|oferec\w*|isso|isto|com)\b",
    r"\b(?:me recuso|recuso-me|prefiro nao|desculpe,? (?:mas )?nao)\b",
    # French
    r"\bje ne (?:peux|pourrai|pourrais|vais|veux|souhaite|suis pas en mesure|suis pas en mesure)"
    r"(?: pas)?(?:\s+\w+){0,3}?\s*(?:aid\w*|fourn\w*|donn\w*|fair\w*|expliqu\w*|partag\w*|"
    r"assist\w*|repond\w*|particip\w*|cela|ca|ceci|vous|t'aider|vous aider|en mesure)\b",
    r"\b(?:je refuse|je dois refuser|je prefere ne pas|il m'est impossible|"
    r"(?:desole|desolee|navre|navree),? (?:mais )?(?:je ne|non)|ce n'est pas quelque chose que "
    r"je)\b",
    # German
    r"\bich (?:kann|werde|darf|mochte|will)(?:\s+\w+){0,4}?\s+(?:nicht|keine|keinen)\b",
    r"\b(?:das|dabei|damit|hierbei) (?:kann|werde|darf|mochte) ich (?:\w+\s+){0,3}?nicht\b",
    r"\b(?:es tut mir leid|leider),? (?:aber )?(?:ich kann|kann ich|das kann|das ist nicht)\b",
    r"\bich lehne (?:das|dies|diese anfrage)? ?ab\b",
    # Italian
    r"\bnon (?:posso|potro|voglio|sono in grado di|mi e possibile)(?:\s+\w+){0,3}?\s+"
    r"(?:aiut\w*|forn\w*|dar\w*|far\w*|spieg\w*|condivid\w*|assist\w*|rispond\w*|partecip\w*|"
    r"questo|cio|con)\b",
    r"\bmi dispiace,? (?:ma )?non\b|\bmi rifiuto\b",
    # Dutch
    r"\bik (?:kan|wil|mag|ga) (?:je |u |jou |daar |hier |hierbij |daarbij )*(?:niet|geen)\b",
    r"\bhet spijt me,? (?:maar )?(?:ik|dat)\b",
    # Indonesian / Malay
    r"\b(?:saya|aku) (?:tidak|tak) (?:bisa|dapat|boleh|akan|mampu)\b",
    r"\bmaaf,? (?:tetapi |tapi )?(?:saya|aku) (?:tidak|tak)\b",
    # Turkish
    r"\b(?:yardimci olamam|yardim edemem|yapamam|saglayamam|veremem|anlatamam|bunu yapmayacagim)\b",
    r"\buzgunum,? (?:ama )?(?:bu|bunu|yardim)\b",
    # Vietnamese
    r"\btoi (?:khong the|se khong|khong duoc phep|tu choi)\b|\bxin loi,? (?:nhung )?toi\b",
    # Swahili, Tagalog
    r"\b(?:siwezi|sitaweza) (?:kusaidia|kutoa|kueleza|kufanya)\b",
    r"\bhindi (?:ko|kita) (?:kayang|magagawa|maibibigay|matutulungan)\b",
]

# ---- other scripts (matched on `native`) --------------------------------------------------------

_NATIVE = [
    # Russian, Ukrainian
    r"(?:я )?не (?:могу|смогу|буду|стану|имею права|вправе|готов|готова)"
    r"(?:\s+\w+){0,3}?\s+(?:помо\w*|предостав\w*|да\w*|рассказ\w*|объясн\w*|дел\w*|"
    r"в этом|с этим|это\w*|участ\w*|отвеч\w*|подсказ\w*)",
    r"(?:я )?вынужден\w* отказа\w*|(?:я )?отказываюсь|(?:извините|простите|к сожалению),? "
    r"(?:но )?(?:я )?не",
    r"(?:я )?не (?:можу|буду|зможу)\s+\w*|(?:вибачте|на жаль),? (?:але )?(?:я )?не",
    # Chinese (simplified and traditional)
    r"(?:我|恕我|抱歉|对不起|對不起|很遗憾|很遺憾)[^。！？\n]{0,6}?(?:不能|无法|無法|不会|不會|"
    r"不可以|没办法|沒辦法|不便|拒绝|拒絕|不予|不提供|做不到)",
    r"(?:无法|無法|不能|不会|不會)(?:为|為|向)?(?:你|您)?(?:提供|协助|協助|帮助|幫助|帮忙|幫忙|回答|"
    r"满足|滿足|参与|參與|告诉|告訴)",
    # Japanese
    r"(?:お手伝い|手伝う|お答え|回答|提供|協力|支援|ご案内|説明|対応|お応え)(?:は|を|すること|"
    r"いたすこと|することは)?(?:でき|出来|いたしかね|致しかね|いたし)(?:ません|かねます)",
    r"(?:できません|出来ません|できかねます|お断り|控えさせて|差し控え)",
    # Korean
    r"(?:도와|도움을|제공|답변|안내|설명)[^.\n]{0,8}?(?:수 없|드릴 수 없|않겠|못 하|못하)",
    r"(?:죄송|유감)[^.\n]{0,12}?(?:없습니다|않습니다|못합니다|어렵습니다)",
    # Hindi, Urdu
    r"(?:मदद|सहायता|जानकारी|उत्तर|जवाब|यह|ऐसा|इसमें)[^।.\n]{0,20}?नहीं (?:कर|दे|बता|दूँगा|दूंगा|"
    r"करूँगा|करूंगा|करूँगी|करूंगी|सकता|सकती|सकते)",
    r"(?:माफ़|माफ|क्षमा|खेद)[^।.\n]{0,25}?नहीं",
    r"(?:मदد|مدد|معلومات|جواب|یہ)[^۔.\n]{0,20}?نہیں (?:کر|دے|بتا)|معذرت[^۔.\n]{0,25}?نہیں",
    # Bengali
    r"(?:সাহায্য|সহায়তা|তথ্য|উত্তর|এটি|এটা|এ বিষয়ে)[^।.\n]{0,25}?(?:পারব না|পারবো না|পারি না|"
    r"পারছি না|করব না|করবো না|দেব না|দিতে পারি না)",
    r"দুঃখিত[^।.\n]{0,30}?না\b|দুঃখিত[^।.\n]{0,30}?না",
    # Arabic, Persian
    r"(?:لا (?:أستطيع|استطيع|يمكنني|أقدر|يسعني|بإمكاني)|لن (?:أساعد|أقدم|أستطيع|أتمكن|أشارك)|"
    r"لا أرغب في|أرفض|يؤسفني|اعتذر عن|أعتذر عن)",
    r"(?:عذرا|عذرًا|آسف|آسفة|معذرة)[^.\n]{0,30}?(?:لا|لن)",
    r"(?:نمی\s?توانم|نمیتوانم|نمی‌توانم|متاسفم[^.\n]{0,20}?نمی)",
    # Thai, Hebrew
    r"(?:ไม่สามารถ|ขออภัย[^.\n]{0,20}?ไม่)",
    r"(?:אני לא יכול|אני לא יכולה|איני יכול|לא אוכל|מצטער[^.\n]{0,20}?לא)",
]

LATIN = re.compile("|".join(f"(?:{p})" for p in _ENGLISH + _LATIN_OTHER), re.MULTILINE)
NATIVE = re.compile("|".join(f"(?:{p})" for p in _NATIVE), re.MULTILINE)


# Intensifiers between the subject and its negation ("I'd really rather not", "I just can't").
_INTENSIFIER = re.compile(r"\b(i(?:'d|'m|'ll)?) (?:really|just|honestly|truly|simply|genuinely|"
                          r"unfortunately|sadly|definitely|certainly|actually|frankly) ")


def find_refusals(native_text: str, latin_text: str) -> list[tuple[int, int]]:
    """Spans of refusal statements; spans index `latin_text` (about the same length as
    `native_text` for every script these patterns read, so native spans are usable too)."""
    latin_text = _INTENSIFIER.sub(r"\1 ", latin_text)
    spans = [m.span() for m in LATIN.finditer(latin_text)]
    spans += [m.span() for m in NATIVE.finditer(native_text)]
    return sorted(spans)
