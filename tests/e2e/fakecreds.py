"""Fake credentials for the end-to-end runs, generated fresh for every run (never committed):
each has the shape of its provider's keys, so leakhound's rules take it for the real thing."""

import secrets
import string
import zlib

ALNUM = string.ascii_letters + string.digits
BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase


def pick(alphabet, n):
    return "".join(secrets.choice(alphabet) for _ in range(n))


def base62(n, width):
    out = ""
    while n:
        n, r = divmod(n, 62)
        out = BASE62[r] + out
    return out.rjust(width, "0")


def aws_pair():
    key_id = "AKIA" + pick(string.ascii_uppercase + "234567", 16)
    secret = pick(ALNUM + "/+", 40)
    return key_id, secret


def github_token():
    body = pick(ALNUM, 30)
    return "ghp_" + body + base62(zlib.crc32(body.encode()), 6)


def anthropic_key():
    return "sk-ant-api03-" + pick(ALNUM + "-_", 93) + "AA"


def slack_bot_token():
    return "xoxb-" + pick(string.digits, 12) + "-" + pick(string.digits, 13) + "-" + pick(ALNUM, 24)


def stripe_key():
    return "sk_" + "live_" + pick(ALNUM, 32)


def weak_password():
    """The kind of password a compose file holds: one class of characters, short."""
    return pick(string.ascii_lowercase, 10)
