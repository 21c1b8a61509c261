"""The main path's count (site/main_path.py): what is collapsed is off it, what shows is on it."""
import importlib.util
from pathlib import Path

spec = importlib.util.spec_from_file_location(
    "main_path", Path(__file__).resolve().parents[2] / "site" / "main_path.py")
main_path = importlib.util.module_from_spec(spec)
spec.loader.exec_module(main_path)

PAGE = """<article>
<h1>03. Self-Attention</h1>
<p>Three words here.</p>
<ul><li>two <em>words</em></li></ul>
<details><p>hidden words do not count</p></details>
<div class="dropdown"><p>nor these</p></div>
<div class="cell tag_hide-input"><div class="cell_input"><pre>x = 1
y = 2</pre></div><div class="cell_output"><p>output text is not prose</p></div></div>
<div class="cell"><div class="cell_input"><pre>a = 1

b = 2
c = 3</pre></div></div>
<div class="cell tag_hide-cell"><div class="toggle">
<div class="cell_input"><pre>hidden = 1</pre></div></div></div>
<figure><img alt="x"><figcaption><p>A caption of five words.</p></figcaption></figure>
<script>var not_counted = "words";</script>
</article>"""


def test_counts_prose_and_visible_code_only():
    assert main_path.count(PAGE) == (2 + 3 + 2 + 5, 3)


def test_reading_time_rounds_up_and_is_at_least_a_minute():
    assert main_path.minutes(0, 0) == 1
    assert main_path.minutes(200, 0) == 1
    assert main_path.minutes(201, 0) == 2
    assert main_path.minutes(1000, 20) == 7
