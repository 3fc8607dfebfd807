"""Spanish: every page with lang=es, the console report, the CSV download (the CLI's very bytes), and the
seed's fecha_desde / fecha_hasta."""

from __future__ import annotations

import re

import pytest

from tests.support.dashboard_data import XSS, english_only_words
from tests.support.helpers import invoke

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")


def test_the_console_report_is_spanish_to_its_last_line(history_file):
    db, _ = history_file
    result = invoke("history", "report", "--db", db, "--to", "2025-01-31", "--lang", "es")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["ID", "nombre", "fecha"] and lines[0].split()[-1] == "interpretación"
    assert lines[4].split()[:3] == ["Resumen", "3", "evaluaciones"] and lines[4].split()[-1] == "Aceptable"
    assert lines[-1] == "desde la primera evaluación hasta 2025-01-31T23:59:59Z"
    english = english_only_words()
    assert not {w.lower() for w in re.findall(r"[A-Za-z]{3,}", result.stdout)} & english
    assert invoke("history", "report", "--db", db, "--to", "2025-01-31").stdout.splitlines()[-1] == (
        "from the first execution to 2025-01-31T23:59:59Z")


@pytest.mark.parametrize("query, cli", [
    ("", []),
    ("?lang=es&date_from=2025-01-01&date_to=2025-01-31", ["--lang", "es", "--from", "2025-01-01", "--to",
                                                          "2025-01-31"]),
    ("?fecha_desde=2025-01-01&fecha_hasta=2025-02-28&lang=es&measure=recip_rank", [
        "--lang", "es", "--from", "2025-01-01", "--to", "2025-02-28", "-m", "recip_rank"]),
    ("?tag=split%3Ddev&name=rm3", ["--tag", "split=dev", "--name", "rm3"]),
])
def test_the_csv_download_is_the_command_lines_csv(client, history_file, query, cli):
    db, _ = history_file
    response = client.get(f"/report.csv{query}")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
    assert response.headers["content-disposition"] == 'attachment; filename="report.csv"'
    expected = invoke("history", "report", "--db", db, "--labels", *cli, "-o", "csv")
    assert expected.exit_code == 0, expected.stderr
    assert response.content == expected.stdout.encode()


def test_the_report_page_links_its_csv_with_its_filters(client):
    page = client.get("/?lang=es&date_from=2025-01-01&date_to=2025-01-31").text
    assert 'href="/report.csv?date_from=2025-01-01&amp;date_to=2025-01-31&amp;labels=true&amp;lang=es"' in page


def test_fecha_desde_and_fecha_hasta_are_date_from_and_date_to(client):
    seed = client.get("/api/report?fecha_desde=2025-01-01&fecha_hasta=2025-01-31&lang=es").json()
    assert seed == client.get("/api/report?date_from=2025-01-01&date_to=2025-01-31&lang=es").json()
    assert seed["summary"]["count"] == 3 and seed["summary"]["label"] == "Aceptable"


def test_every_page_in_spanish(client, history_file):
    _, ids = history_file
    english = english_only_words()
    for url in ["/", "/trends", f"/executions/{ids['rm3']}", f"/compare?ids={ids['bm25']},{ids['rm3']}",
                f"/diff?a={ids['bm25']}&b={ids['rm3']}", "/suites", "/login", "/nothing/here"]:
        response = client.get(url + ("&" if "?" in url else "?") + "lang=es")
        assert response.status_code in (200, 404), url
        text = response.text
        assert '<html lang="es">' in text, url
        visible = re.sub(r"<[^>]*>", " ", re.sub(r'<(a|span|nav)[^>]*lang="en".*?</\1>', " ", text))
        found = {w.lower() for w in re.findall(r"[A-Za-z]{3,}", visible)} & english
        twin = {"/": "/api/report", "/trends": "/api/executions"}.get(url.split("?")[0], "/api" + url)
        data = client.get(twin).text if not url.startswith(("/login", "/nothing")) else ""
        user_words = {w.lower() for w in re.findall(r"[A-Za-z]{3,}", data + url)}  # names, paths: as typed
        assert not found - user_words, (url, sorted(found - user_words))
        assert "Reporte comparativo" in text and "Tendencias" in text
        links = [h for h, rest in re.findall(r'href="(/[^"]*)"([^>]*)', text) if 'lang="en"' not in rest]
        inner = [h for h in links if not h.startswith(("/static/", "/api/", "/report.csv")) and "lang=" not in h]
        assert not inner, (url, inner)  # every link within the dashboard keeps the language


def test_the_language_switch_keeps_the_address(client):
    text = client.get("/trends?date_from=2025-01-01&lang=es").text
    assert 'href="/trends?date_from=2025-01-01" lang="en"' in text
    assert 'href="/trends?date_from=2025-01-01&amp;lang=es" lang="es"' in text
    assert XSS not in client.get("/?lang=es").text


def test_spanish_charts_speak_spanish_and_name_no_month(client, history_file):
    from tests.support.html_pages import Page

    _, ids = history_file
    trends = Page(client.get("/trends?lang=es").text)
    for figure in trends.figures:
        axis = figure["layout"]["xaxis"]
        assert axis["title"]["text"] == "registrada (UTC)" and axis["tickformat"] == "%Y-%m-%d"
    assert "tickformat" not in Page(client.get("/trends").text).figures[0]["layout"]["xaxis"]
    compare = Page(client.get(f"/compare?ids={ids['bm25']},{ids['rm3']}&lang=es").text)
    titles = [f["layout"]["title"]["text"] for f in compare.figures]
    assert titles == ["recip_rank por consulta", "recip_rank: diferencia por consulta", "P_5 por consulta",
                      "P_5: diferencia por consulta"]


def test_the_html_report_file_is_spanish_too(history_file, tmp_path):
    db, _ = history_file
    out = tmp_path / "reporte.html"
    result = invoke("history", "report", "--db", db, "--to", "2025-01-31", "--lang", "es", "-o", "html",
                    "--output", str(out))
    assert result.exit_code == 0, result.stderr
    text = out.read_text()
    assert '<html lang="es">' in text and "evaltool: reporte del historial" in text and "Tendencias" in text
    assert "3 evaluaciones" in text and "executions" not in text.split("<script")[0]


@pytest.mark.parametrize("query, spanish", [
    ("date_from=2025-02-30", "date_from '2025-02-30': se esperaba una fecha u hora ISO-8601"),
    ("date_from=2025-03-01&date_to=2025-01-01", "date_from 2025-03-01 es posterior a date_to 2025-01-01"),
    ("date_to=9999-12-31", "fuera de las fechas que guarda el historial"),
])
def test_a_mistyped_filter_is_explained_in_spanish(client, query, spanish):
    import html

    page = client.get(f"/?{query}&lang=es")
    assert page.status_code == 400 and html.escape(spanish) in page.text
    visible = re.sub(r"<[^>]*>", " ", re.sub(r'<(a|span|nav)[^>]*lang="en".*?</\1>', " ", page.text))
    assert not {w.lower() for w in re.findall(r"[A-Za-z]{3,}", visible)} & english_only_words()
    english = client.get(f"/api/report?{query}").json()["error"]
    assert "expected" in english or "swap" in english
