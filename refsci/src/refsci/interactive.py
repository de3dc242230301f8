"""Prompting for inputs missing from the command line (--interactive)."""

import sys

from refsci.errors import UsageError


def _ask(prompt, thing):
    try:
        answer = input(prompt)
    except EOFError:
        raise UsageError(f"input ended while asking for {thing}",
                         f"interactive prompt '{prompt.strip()}'",
                         "answer every prompt or pass the value on the command line") from None
    if not sys.stdin.isatty():
        # The answer was not echoed: end the prompt line so stdout stays readable.
        print(flush=True)
    return answer.strip()


def ask_required(prompt, thing):
    answer = _ask(prompt, thing)
    if not answer:
        raise UsageError(f"no answer given for {thing}", f"interactive prompt '{prompt.strip()}'",
                         f"type {thing}; it has no default")
    return answer


def ask_model(models, default):
    prompt = f"Model [{'/'.join(models)}] (default {default}): "
    answer = _ask(prompt, "the model")
    if not answer:
        return default
    if answer not in models:
        raise UsageError(f"unknown model '{answer}'", f"interactive prompt '{prompt.strip()}'",
                         "answer one of " + ", ".join(models))
    return answer


def ask_seed(default):
    prompt = f"Seed (default {default}): "
    answer = _ask(prompt, "the seed")
    if not answer:
        return default
    try:
        seed = int(answer, 10)
    except ValueError:
        raise UsageError(f"seed '{answer}' is not an integer", f"interactive prompt '{prompt.strip()}'",
                         "answer a whole number between 0 and 4294967295") from None
    if not 0 <= seed <= 4294967295:
        raise UsageError(f"seed {seed} is out of range", f"interactive prompt '{prompt.strip()}'",
                         "answer a whole number between 0 and 4294967295")
    return seed
