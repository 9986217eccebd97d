"""The KV-prefix accounting on planted token sequences: what a slot reuses and evaluates, call by call."""

from __future__ import annotations

from nomad_lab.core.prefix_cache import CacheRule, Slot, account, charge, common_prefix, timed

SYSTEM = list(range(1, 21))  # 20 tokens of system block
HISTORY = list(range(100, 160))  # 60 tokens of history
BLOCK_A = list(range(500, 540))  # a retrieved block, 40 tokens
BLOCK_B = list(range(600, 640))
TURN_1 = [900, 901, 902]
TURN_2 = [910, 911, 912, 913]


def test_common_prefix_stops_at_the_first_difference() -> None:
    assert common_prefix([1, 2, 3], [1, 2, 4]) == 2
    assert common_prefix([1, 2], [1, 2, 3]) == 2
    assert common_prefix([], [1]) == 0


def test_a_shared_prefix_is_reused_and_only_the_rest_evaluated() -> None:
    first = SYSTEM + HISTORY + BLOCK_A + TURN_1  # tail: block and turn after history
    second = SYSTEM + HISTORY + TURN_1 + BLOCK_B + TURN_2
    one, two = account([first, second])
    assert (one.reused_tokens, one.evaluated_tokens) == (0, len(first))
    assert two.reused_tokens == len(SYSTEM + HISTORY)
    assert two.evaluated_tokens == len(TURN_1 + BLOCK_B + TURN_2)
    assert two.context_tokens == two.reused_tokens


def test_front_placement_re_evaluates_history_after_a_new_block() -> None:
    first = SYSTEM + BLOCK_A + HISTORY + TURN_1
    second = SYSTEM + BLOCK_B + HISTORY + TURN_1 + TURN_2
    _, two = account([first, second])
    assert two.reused_tokens == len(SYSTEM)
    assert two.evaluated_tokens == len(BLOCK_B + HISTORY + TURN_1 + TURN_2)


def test_a_changed_system_block_evicts_everything_after_its_first_changed_token() -> None:
    changed = [*SYSTEM[:5], 77, *SYSTEM[6:]]
    _, two = account([SYSTEM + HISTORY + TURN_1, changed + HISTORY + TURN_1])
    assert two.reused_tokens == 5
    assert two.evaluated_tokens == len(SYSTEM + HISTORY + TURN_1) - 5


def test_a_rewrite_call_on_the_slot_evicts_the_chat_prefix() -> None:
    bos, rewrite = [2], [2, 800, 801, 802]  # the rewrite prompt shares only BOS with the chat
    chat_1 = bos + SYSTEM + HISTORY + TURN_1
    chat_2 = bos + SYSTEM + HISTORY + TURN_1 + TURN_2
    plain = account([chat_1, chat_2])[1]
    slot = Slot()
    slot.call(chat_1)
    between = slot.call(rewrite)
    after = slot.call(chat_2)
    assert between.reused_tokens == 1 and after.reused_tokens == 1
    assert plain.evaluated_tokens == len(TURN_2)
    assert after.evaluated_tokens == len(chat_2) - 1


def test_at_least_the_last_token_is_evaluated_and_generated_tokens_stay_held() -> None:
    slot = Slot()
    slot.call([1, 2, 3])
    again = slot.call([1, 2, 3])
    assert (again.reused_tokens, again.evaluated_tokens) == (2, 1)
    slot.call([1, 2, 3], generated=[4, 5])
    assert slot.call([1, 2, 3, 4, 5, 6]).reused_tokens == 5


def test_a_sliding_window_cache_that_dropped_positions_forces_a_full_re_evaluation() -> None:
    rule = CacheRule(sliding_window=8, swa_keep=10)
    held = list(range(30))  # the SWA layers hold positions 20..29 only
    appended = charge(held, [*held, 99], rule)  # pure append: p = 30, needs [22, 30): held
    assert appended.reused_tokens == 30
    diverged = charge(held, [*held[:25], 99, 98], rule)  # p = 25 needs [17, 25): 17..19 dropped
    assert (diverged.reused_tokens, diverged.evaluated_tokens) == (0, 27)
    short = charge(list(range(9)), [0, 1, 2, 50], rule)  # nothing dropped yet: the prefix is reused
    assert short.reused_tokens == 3
    full = charge(held, [*held[:25], 99, 98], CacheRule(sliding_window=8))  # swa_full: all kept
    assert full.reused_tokens == 25


def test_a_one_token_evaluation_reports_no_prompt_time() -> None:
    assert not timed(charge([1, 2, 3], [1, 2, 3]).evaluated_tokens)
    assert timed(charge([1, 2, 3], [1, 2, 4, 5]).evaluated_tokens)
