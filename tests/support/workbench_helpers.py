"""Helpers of the workbench's dashboard tests (in-process and in a real browser): signing a client in,
and the words of a page that are its own text (what users typed and identifiers left out)."""

from __future__ import annotations

import html as html_module
import re

WORD = re.compile(r"[^\W\d_]{3,}")  # letters only, accented ones included ("editó" is one word)


def log_in(client, secret: str) -> str:
    """Sign an in-process client's browser session in with ``secret``; the session's CSRF token."""
    page = client.get("/login")
    nonce = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
    done = client.post("/login", data={"token": secret, "csrf_token": nonce, "next": "/suites"},
                       follow_redirects=False)
    assert done.status_code == 303, done.text
    return re.search(r'name="csrf_token" value="([^"]+)"', client.get("/suites").text).group(1)


def page_text(page: str, *user_texts: str) -> str:
    """The visible text of a page, without the strings users typed (names, queries, ids), what the search
    returned (titles and snippets: the corpus's language), the runner's option names, and identifiers
    (paths, module:function specs, field names such as relevant_ids)."""
    text = re.sub(r"<script.*?</script>|<style.*?</style>", " ", page, flags=re.S)
    text = re.sub(r'<span class="(title|snippet)">.*?</span>', " ", text, flags=re.S)
    text = re.sub(r'<th scope="row">opciones</th><td>.*?</td>', " ", text, flags=re.S)
    text = html_module.unescape(re.sub(r"<[^>]+>", " ", text))
    for user in user_texts:
        text = text.replace(user, " ")
    return " ".join(token for token in text.split() if not re.search(r"[/:=_.@]", token))


def english_in(shown: str) -> list[str]:
    """Each English-only word of the catalogue found in ``shown``, with the text around it."""
    from tests.support.dashboard_data import english_only_words

    english = english_only_words()
    found = sorted({w for w in WORD.findall(shown) if w.lower() in english})
    return [" ".join(shown[max(0, m.start() - 60):m.end() + 60].split()) for w in found
            for m in [re.search(rf"(?<!\w){w}(?!\w)", shown)] if m] or found
