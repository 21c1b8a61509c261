"""Batches by tokens (paper §5.1): every pair once an epoch, each batch within its tokens, of
one length, and as full as the next pair of its length allows."""
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from illustrated.data.batching import token_epoch, tokens_fit


def batches_of(order, widths, tokens, at_least=1):
    out = []
    while order:
        taken = tokens_fit(order, widths, tokens, at_least)
        out.append(order[:taken])
        order = order[taken:]
    return out


def padded(batch, widths):
    """(source, target) positions of the padded batch: pairs x the longest of each side."""
    return (len(batch) * max(widths[i][0] for i in batch),
            len(batch) * max(widths[i][1] for i in batch))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 12), st.integers(2, 13)), min_size=1, max_size=80),
       st.integers(13, 200), st.integers(0, 10))
def test_every_pair_once_each_batch_within_its_tokens_and_full(widths, tokens, seed):
    order = token_epoch(widths, tokens, torch.Generator().manual_seed(seed))
    assert sorted(order) == list(range(len(widths)))  # every pair, once
    batches = batches_of(order, widths, tokens)
    assert [i for b in batches for i in b] == order
    for n, batch in enumerate(batches):
        assert max(padded(batch, widths)) <= tokens
        assert len({max(widths[i]) for i in batch}) == 1  # one length (its longer side)
        if n + 1 < len(batches) and max(widths[batches[n + 1][0]]) == max(widths[batch[0]]):
            assert max(padded(batch + batches[n + 1][:1], widths)) > tokens  # full


def test_a_rest_of_the_order_gives_the_same_batches():
    """What a resumed run cuts from the order it saved is what the run itself cut."""
    widths = [(1 + i % 7, 2 + (3 * i) % 9) for i in range(50)]
    order = token_epoch(widths, 40, torch.Generator().manual_seed(3))
    batches = batches_of(order, widths, 40)
    rest = order[sum(len(b) for b in batches[:4]):]
    assert batches_of(rest, widths, 40) == batches[4:]


def test_batches_hold_sentences_of_about_one_length():
    widths = [(n, n + 1) for n in range(1, 11) for _ in range(20)]  # 20 pairs of each length
    order = token_epoch(widths, 60, torch.Generator().manual_seed(0))
    for batch in batches_of(order, widths, 60):
        assert len({widths[i] for i in batch}) == 1
    assert max(len(b) for b in batches_of(order, widths, 60)) == 20  # 20 pairs of width 2, 3
    assert order != sorted(order, key=lambda i: widths[i])  # the batches in random order


def test_at_least_gives_every_micro_batch_a_pair():
    widths = [(10, 11)] * 3 + [(3, 4)] * 3
    assert tokens_fit(list(range(6)), widths, 11, at_least=4) == 4
    assert tokens_fit(list(range(6)), widths, 11) == 1
    assert tokens_fit([3, 4, 0, 5], widths, 12) == 2  # stops where the length changes


def test_a_batch_may_fill_its_budget_exactly_and_not_one_token_more():
    widths = [(3, 4)] * 4  # 4 positions a pair
    assert tokens_fit([0, 1, 2, 3], widths, 12) == 3
    assert tokens_fit([0, 1, 2, 3], widths, 11) == 2
