"""MultiHeadAttention called on its own checks its inputs: NaN or infinity in a query, key or
value is refused by name; on the meta device it still gives shapes."""
import pytest
import torch

from illustrated.modules import MultiHeadAttention


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
@pytest.mark.parametrize("where", ["query", "key", "value"])
def test_nan_in_a_query_key_or_value_is_refused(bad, where):
    mha = MultiHeadAttention(16, 4).eval()
    inputs = {name: torch.randn(2, 3, 16) for name in ("query", "key", "value")}
    inputs[where][1, 2, 5] = bad
    with pytest.raises(ValueError, match=rf"^{where}: expected finite numbers, got NaN or "
                                         rf"infinity$"):
        mha(inputs["query"], inputs["key"], inputs["value"])


def test_the_meta_device_still_gives_shapes():
    with torch.device("meta"):
        mha = MultiHeadAttention(16, 4)
        x = torch.empty(2, 3, 16)
    assert mha(x, x, x).shape == (2, 3, 16)
