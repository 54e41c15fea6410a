"""No password of a PostgreSQL connection string ever leaves the store (issue 26, item 7).

ad97106 redacted only the URL's user info and a literal ``password=`` query key: a
percent-encoded key (``pass%77ord=``) kept the password in ``budget.store``, the repr,
pickles and an error, and an unencoded ``#``, ``/`` or ``?`` in a password was echoed.
Now libpq itself reads the string and the store rebuilds it without secrets.
"""

from __future__ import annotations

import pickle
import re
import traceback
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skdp import BudgetExhaustedError, PrivacyBudget, PrivacyError
from skdp.accounting.stores import redact_url

MARK = "¤"  # between every character of a password: any leaked piece shows it


def _leaks(text: str) -> bool:
    return MARK in text or quote(MARK).lower() in text.lower()


@st.composite
def passwords(draw):
    body = draw(st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")),
                        min_size=1, max_size=12))
    return MARK + MARK.join(body) + MARK


@st.composite
def spelled_password_key(draw):
    """``password`` with any of its letters percent-encoded (either hex case)."""
    out = []
    for ch in "password":
        if draw(st.booleans()):
            code = f"{ord(ch):02x}"
            out.append("%" + (code.upper() if draw(st.booleans()) else code))
        else:
            out.append(ch.upper() if draw(st.integers(0, 7)) == 0 else ch)
    return "".join(out)


def _conninfo_quote(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


@st.composite
def urls_with_passwords(draw):
    pw = draw(passwords())
    form = draw(st.sampled_from(["userinfo", "userinfo-raw", "query", "query-raw", "both",
                                 "conninfo"]))
    host = "127.0.0.1:9"
    if form == "userinfo":
        url = f"postgresql://skdp:{quote(pw, safe='')}@{host}/db"
    elif form == "userinfo-raw":  # unencoded # ? / @ % and all
        url = f"postgresql://skdp:{pw}@{host}/db"
    elif form == "query":
        url = f"postgresql://skdp@{host}/db?{draw(spelled_password_key())}={quote(pw, safe='')}"
    elif form == "query-raw":
        url = f"postgresql://skdp@{host}/db?sslmode=disable&{draw(spelled_password_key())}={pw}"
    elif form == "both":
        other = draw(passwords())
        url = (f"postgresql://skdp:{quote(other, safe='')}@{host}/db?"
               f"{draw(spelled_password_key())}={quote(pw, safe='')}")
    else:
        url = f"host=127.0.0.1 port=9 user=skdp password={_conninfo_quote(pw)} dbname=db"
    return url


@given(urls_with_passwords())
def test_redact_url_never_shows_a_password(url):
    assert _leaks(url)
    for mask in ("***", None):
        assert not _leaks(redact_url(url, mask))


@given(urls_with_passwords())
def test_no_error_of_an_unreachable_store_shows_its_password(url):
    # Port 9 on loopback is closed: the store fails at once, with an error to check.
    with pytest.raises((PrivacyError, ValueError)) as info:
        PrivacyBudget(1.0, store=url)
    assert not _leaks("".join(traceback.format_exception(info.value)))


def _check_budget(budget: PrivacyBudget, password: str) -> None:
    budget.spend(0.5, label="x")
    texts = [budget.store, repr(budget), str(budget.charges),
             pickle.dumps(budget).decode("latin-1")]
    with pytest.raises(BudgetExhaustedError) as info:
        budget.spend(5.0)
    texts.append("".join(traceback.format_exception(info.value)))
    for text in texts:
        assert password not in text and quote(password, safe="") not in text


def test_a_percent_encoded_password_key_is_used_and_never_shown(postgresql_db_url):
    """ad97106: ``pass%77ord=`` left the password in budget.store, repr and pickles."""
    from _postgres import PG_PASSWORD, PG_USER

    host_db = postgresql_db_url.split("@", 1)[1]
    for key in ("pass%77ord", "%70%61%73%73%77%6F%72%64", "password"):
        url = f"postgresql://{PG_USER}@{host_db}?{key}={quote(PG_PASSWORD, safe='')}"
        _check_budget(PrivacyBudget(1.0, store=url), PG_PASSWORD)
    conninfo = (f"host=127.0.0.1 port={host_db.split(':')[1].split('/')[0]} user={PG_USER} "
                f"password={PG_PASSWORD} dbname={host_db.rsplit('/', 1)[1]}")
    _check_budget(PrivacyBudget(1.0, store=conninfo), PG_PASSWORD)


@pytest.mark.parametrize("password", ["h#sh?q", "a?b#c&d=e", "p/ss#w?rd", "p@ss:w/rd"])
def test_unencoded_special_characters_in_a_password_are_never_echoed(
        postgresql_server, postgresql_db_url, password):
    """ad97106: an unencoded ``#``, ``/`` or ``?`` in a password was echoed."""
    from _postgres import PG_USER
    from psycopg import sql

    role = "skdp_odd"
    with postgresql_server._admin() as conn:
        conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))
        # a second login with the application role's rights, and an odd password
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {} IN ROLE {}").format(
            sql.Identifier(role), sql.Literal(password), sql.Identifier(PG_USER)))
    host_db = postgresql_db_url.split("@", 1)[1]
    url = f"postgresql://{role}:{password}@{host_db}"
    if "/" in password or "@" in password:  # libpq would misread it: refused, not echoed
        with pytest.raises(ValueError, match="percent-encode") as info:
            PrivacyBudget(1.0, store=url)
        text = "".join(traceback.format_exception(info.value))
        pieces = [p for p in re.split("[/@:]", password) if len(p) >= 3]
        assert password not in text and not any(p in text for p in pieces)
        budget = PrivacyBudget(1.0, store=f"postgresql://{role}:{quote(password, safe='')}"
                                          f"@{host_db}")
    else:
        budget = PrivacyBudget(1.0, store=url)
    _check_budget(budget, password)
