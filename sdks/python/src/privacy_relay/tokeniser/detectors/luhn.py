"""Luhn (mod 10) check over a string of digits."""


def passes_luhn(digits: str) -> bool:
    total = 0
    double = False
    for ch in reversed(digits):
        d = ord(ch) - 48
        if double:
            d *= 2
            if d > 9:
                d -= 9
        total += d
        double = not double
    return len(digits) > 0 and total % 10 == 0
