"""The clock's spoken words read back into numbers, as a listener (or a recogniser) gets them."""

WORDS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine".split())}
WORDS.update({w: 10 + i for i, w in enumerate("ten eleven twelve thirteen fourteen fifteen sixteen".split())})
WORDS.update({"seventeen": 17, "eighteen": 18, "nineteen": 19})
WORDS.update(
    {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
)


def read_number(words):
    """The number a run of number words says (`twenty four`, `one hundred ten`)."""
    total = 0
    for word in words:
        if word in ("hundred", "thousand"):
            total *= 100 if word == "hundred" else 1000
        else:
            total += WORDS[word]
    return total


def read_duration(text):
    """Seconds from `twelve minutes thirty`, `one minute`, `forty seconds`, `no time`."""
    words = text.split()
    if words == ["no", "time"]:
        return 0
    if words[-1] in ("second", "seconds"):
        return read_number(words[:-1])
    at = words.index("minute") if "minute" in words else words.index("minutes")
    return 60 * read_number(words[:at]) + (read_number(words[at + 1 :]) if words[at + 1 :] else 0)


def heard(text):
    """(shown seconds, penalty or None) from a time as said: `... left` or `... over, P points`."""
    if text.endswith(" left"):
        return read_duration(text[: -len(" left")]), None
    over, pen = text.split(" over, ")
    return -read_duration(over), read_number(pen.split()[:-1])
