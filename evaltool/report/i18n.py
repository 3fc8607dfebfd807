"""The words evaltool shows people, in English and Spanish: one catalogue, one function.

The dashboard's pages, the charts they draw and the console's comparative report take
their text from :data:`CATALOGUE` through :func:`t`; a page in Spanish is the same page
with ``lang="es"``. Every key has every language of :data:`LANGUAGES` with the same
``{placeholders}`` (a test checks it), so a missing translation is a test failure, not
an English word on a Spanish page.

Spanish uses the words of a Spanish evaluation report: an execution is an *evaluación*, the summary row
says "3 evaluaciones", labels are *Bueno / Regular / Mejorable* and the summary's
*Eficiente / Aceptable / Mejorable* (those live with the thresholds, in
:mod:`evaltool.evaluation.labels`).

>>> t("report.count", "es", count=3), t("report.count_one", "en", count=1)
('3 evaluaciones', '1 execution')
>>> t("nav.trends", "es")
'Tendencias'
>>> t("nav.trends", "fr")
Traceback (most recent call last):
...
evaltool.errors.EvaltoolError: lang 'fr': expected one of en, es
"""

from __future__ import annotations

from evaltool.errors import EvaltoolError

LANGUAGES = ("en", "es")
LANGUAGE_NAMES = {"en": "English", "es": "Español"}  # each in its own language

CATALOGUE: dict[str, dict[str, str]] = {
    # navigation and the frame of every page
    "nav.report": {"en": "Comparative report", "es": "Reporte comparativo"},
    "nav.trends": {"en": "Trends", "es": "Tendencias"},
    "nav.suites": {"en": "Suites", "es": "Pruebas controladas"},
    "nav.language": {"en": "Language", "es": "Idioma"},
    "nav.login": {"en": "Log in", "es": "Iniciar sesión"},
    "nav.logout": {"en": "Log out", "es": "Cerrar sesión"},
    "nav.signed_in": {"en": "{name} ({role})", "es": "{name} ({role})"},
    "page.json": {"en": "this page as JSON", "es": "esta página en JSON"},
    "page.read_only": {
        "en": "Read-only: this dashboard was started without a token, so nothing can be changed through it.",
        "es": "Solo lectura: este panel se inició sin ningún token, así que aquí no se puede modificar nada.",
    },
    "role.operator": {"en": "operator", "es": "operador"},
    "role.rater": {"en": "rater", "es": "evaluador"},
    # the filters' form
    "filter.from": {"en": "from", "es": "desde"},
    "filter.to": {"en": "to", "es": "hasta"},
    "filter.name": {"en": "name", "es": "nombre"},
    "filter.tag": {"en": "tag", "es": "etiqueta"},
    "filter.measures": {"en": "measures", "es": "medidas"},
    "filter.all_names": {"en": "all names", "es": "todos los nombres"},
    "filter.key_value": {"en": "KEY=VALUE", "es": "CLAVE=VALOR"},
    "filter.all_measures": {"en": "all (map ndcg_cut.10 ...)", "es": "todas (map ndcg_cut.10 ...)"},
    "filter.show": {"en": "Show", "es": "Mostrar"},
    "range.text": {
        "en": "{low} to {high} (UTC, both included)",
        "es": "desde {low} hasta {high} (UTC, ambos incluidos)",
    },
    "range.first": {"en": "the first execution", "es": "la primera evaluación"},
    "range.last": {"en": "the last", "es": "la última"},
    # the comparative report (page and console)
    "report.title": {"en": "Comparative report", "es": "Reporte comparativo"},
    "report.count": {"en": "{count} executions", "es": "{count} evaluaciones"},
    "report.count_one": {"en": "{count} execution", "es": "{count} evaluación"},
    "report.range_count": {"en": "{range}: {count}", "es": "{range}: {count}"},
    "report.compare": {"en": "compare", "es": "comparar"},
    "report.pick": {"en": "pick execution {id}", "es": "elegir la evaluación {id}"},
    "report.compare_picked": {"en": "Compare the executions picked", "es": "Comparar las evaluaciones elegidas"},
    "report.mean": {"en": "mean", "es": "promedio"},
    "report.none": {"en": "No execution in this range.", "es": "Ninguna evaluación en este intervalo."},
    "report.csv": {"en": "CSV", "es": "CSV"},
    "report.summary": {"en": "summary", "es": "Resumen"},
    "report.file_title": {"en": "evaltool history report", "es": "evaltool: reporte del historial"},
    "report.execution_note": {"en": "execution {id}", "es": "evaluación {id}"},
    "report.span": {"en": "from {low} to {high}", "es": "desde {low} hasta {high}"},
    "column.id": {"en": "id", "es": "ID"},
    "column.name": {"en": "name", "es": "nombre"},
    "column.date": {"en": "date (UTC)", "es": "fecha (UTC)"},
    "column.recorded_at": {"en": "recorded_at", "es": "fecha"},
    "column.label": {"en": "label", "es": "interpretación"},
    "column.note": {"en": "note", "es": "nota"},
    "column.tags": {"en": "tags", "es": "etiquetas"},
    "column.measure": {"en": "measure", "es": "medida"},
    "column.value": {"en": "value", "es": "valor"},
    "column.query": {"en": "query", "es": "consulta"},
    # trends
    "trends.title": {"en": "Trends", "es": "Tendencias"},
    "trends.shown": {
        "en": "{count} executions, from number {first}",
        "es": "{count} evaluaciones, desde la número {first}",
    },
    "trends.more": {"en": " (more on the next page)", "es": " (hay más en la página siguiente)"},
    "trends.executions": {"en": "Executions", "es": "Evaluaciones"},
    "trends.previous": {"en": "previous page", "es": "página anterior"},
    "trends.next": {"en": "next page", "es": "página siguiente"},
    # one execution
    "execution.page": {"en": "Execution", "es": "Evaluación"},
    "execution.title": {"en": "Execution {id}: ", "es": "Evaluación {id}: "},
    "execution.recorded_at": {"en": "recorded at (UTC)", "es": "registrada (UTC)"},
    "execution.kind": {"en": "kind", "es": "tipo"},
    "execution.queries": {"en": "queries", "es": "consultas"},
    "execution.options": {"en": "options", "es": "opciones"},
    "execution.fingerprint": {"en": "{source} sha256", "es": "sha256 de {source}"},
    "execution.commit": {"en": "git commit", "es": "commit de git"},
    "execution.source": {"en": "source: {source}", "es": "origen: {source}"},
    "execution.summary": {"en": "Summary", "es": "Resumen"},
    "execution.per_query": {"en": "Per query", "es": "Por consulta"},
    "kind.eval": {"en": "eval", "es": "evaluación"},
    "kind.compare": {"en": "compare", "es": "comparación"},
    "kind.bench": {"en": "bench", "es": "banco de pruebas"},
    "kind.suite": {"en": "suite", "es": "prueba controlada"},
    "source.qrels": {"en": "qrels", "es": "qrels"},
    "source.run": {"en": "run", "es": "corrida"},
    "source.queries": {"en": "queries", "es": "consultas"},
    "source.backend": {"en": "backend", "es": "sistema de búsqueda"},
    # differences and side by side
    "diff.title": {"en": "Difference", "es": "Diferencia"},
    "diff.heading": {
        "en": "{b} (#{b_id}) against {a} (#{a_id}): {count} shared queries",
        "es": "{b} (#{b_id}) frente a {a} (#{a_id}): {count} consultas en común",
    },
    "diff.mean_a": {"en": "mean A", "es": "promedio A"},
    "diff.mean_b": {"en": "mean B", "es": "promedio B"},
    "diff.delta": {"en": "delta", "es": "delta"},
    "diff.p": {"en": "p", "es": "p"},
    "diff.p_adjusted": {"en": "p adjusted", "es": "p ajustado"},
    "diff.ci": {"en": "ci", "es": "IC"},
    "diff.wins": {"en": "wins", "es": "mejoras"},
    "diff.ties": {"en": "ties", "es": "empates"},
    "diff.losses": {"en": "losses", "es": "caídas"},
    "diff.method": {
        "en": "test: {test}; correction over the measures: {correction}",
        "es": "prueba: {test}; corrección sobre las medidas: {correction}",
    },
    "diff.only": {"en": "{count} queries only in {side}", "es": "{count} consultas solo en {side}"},
    "diff.moved": {"en": "Queries that moved most", "es": "Consultas que más cambiaron"},
    "diff.plots": {"en": "per-query plots of the two", "es": "gráficos por consulta de ambas"},
    "test.t": {"en": "paired t", "es": "t pareada"},
    "test.wilcoxon": {"en": "Wilcoxon", "es": "Wilcoxon"},
    "test.randomization": {"en": "randomization", "es": "aleatorización"},
    "test.bootstrap": {"en": "bootstrap", "es": "remuestreo bootstrap"},
    "correction.holm": {"en": "Holm", "es": "Holm"},
    "correction.bonferroni": {"en": "Bonferroni", "es": "Bonferroni"},
    "correction.bh": {"en": "Benjamini-Hochberg", "es": "Benjamini-Hochberg"},
    "correction.none": {"en": "none", "es": "ninguna"},
    "compare.title": {"en": "Side by side", "es": "Lado a lado"},
    "compare.baseline": {"en": "baseline: #{id} {name} ({date})", "es": "referencia: #{id} {name} ({date})"},
    # charts
    "chart.per_query_values": {"en": "per-query values", "es": "valores por consulta"},
    "chart.query": {"en": "query", "es": "consulta"},
    "chart.queries": {"en": "queries", "es": "consultas"},
    "chart.recorded_at": {"en": "recorded at (UTC)", "es": "registrada (UTC)"},
    "chart.per_query": {"en": "{measure} per query", "es": "{measure} por consulta"},
    "chart.difference_title": {"en": "{measure}: per-query difference", "es": "{measure}: diferencia por consulta"},
    "chart.difference": {"en": "difference", "es": "diferencia"},
    "chart.interval": {"en": "{level} CI", "es": "IC {level}"},
    # suites
    "suites.title": {"en": "Suites", "es": "Pruebas controladas"},
    "suites.suite": {"en": "suite", "es": "prueba"},
    "suites.state": {"en": "state", "es": "estado"},
    "suites.backend": {"en": "backend", "es": "sistema de búsqueda"},
    "suites.measures": {"en": "measures", "es": "medidas"},
    "suites.last_run": {"en": "last run (UTC)", "es": "última ejecución (UTC)"},
    "suites.execution": {"en": "execution", "es": "evaluación"},
    "suites.last_result": {"en": "last result", "es": "último resultado"},
    "suites.active": {"en": "active", "es": "activa"},
    "suites.disabled": {"en": "disabled", "es": "desactivada"},
    "suites.never": {"en": "never run", "es": "nunca ejecutada"},
    "suites.none": {
        "en": "No suite defined yet; define one with",
        "es": "Todavía no hay pruebas definidas; defina una con",
    },
    # errors, login
    "error.back": {"en": "back to the report", "es": "volver al reporte"},
    "error.400": {"en": "Bad request", "es": "Solicitud incorrecta"},
    "error.401": {"en": "Log in first", "es": "Primero inicie sesión"},
    "error.403": {"en": "Not allowed", "es": "No permitido"},
    "error.404": {"en": "Not found", "es": "No encontrado"},
    "error.405": {"en": "Not allowed here", "es": "No permitido aquí"},
    "error.413": {"en": "Too large", "es": "Demasiado grande"},
    "error.500": {"en": "Internal error", "es": "Error interno"},
    "error.other": {"en": "Error", "es": "Error"},
    "error.nothing_at": {"en": "nothing at {path}", "es": "no hay nada en {path}"},
    "error.internal": {
        "en": "internal error (the server's log has the details)",
        "es": "error interno (el registro del servidor tiene los detalles)",
    },
    "param.integer": {
        "en": "{name} {text}: expected a whole number from {low} to {high}",
        "es": "{name} {text}: se esperaba un número entero de {low} a {high}",
    },
    "param.date": {
        "en": "{name} {text}: expected an ISO-8601 date or time such as 2025-01-28, 2025-01-28T09:30 "
        "or 2025-01-28T09:30:00Z",
        "es": "{name} {text}: se esperaba una fecha u hora ISO-8601, como 2025-01-28, 2025-01-28T09:30 "
        "o 2025-01-28T09:30:00Z",
    },
    "param.date_outside": {
        "en": "{name} {text}: outside the dates the history holds; expected a date from 1000-01-01 to 9999-12-30",
        "es": "{name} {text}: fuera de las fechas que guarda el historial; se esperaba una fecha "
        "de 1000-01-01 a 9999-12-30",
    },
    "param.date_order": {
        "en": "date_from {low} is after date_to {high}: the range is empty; swap them",
        "es": "date_from {low} es posterior a date_to {high}: el intervalo está vacío; inviértalas",
    },
    "login.title": {"en": "Log in", "es": "Iniciar sesión"},
    "login.token": {"en": "Token", "es": "Token"},
    "login.explain": {
        "en": "Paste the token the server's operator gave you. The browser then keeps a session "
        "cookie for 12 hours; the token itself is not stored.",
        "es": "Pegue el token que le dio quien administra el servidor. El navegador guarda luego una "
        "cookie de sesión durante 12 horas; el token mismo no se guarda.",
    },
    "login.submit": {"en": "Log in", "es": "Entrar"},
    "login.wrong": {"en": "That token is not valid.", "es": "Ese token no es válido."},
    "login.done": {"en": "Signed in as {name} ({role}).", "es": "Sesión iniciada como {name} ({role})."},
    "login.read_only": {
        "en": "This dashboard was started without a token: there is nothing to log in to.",
        "es": "Este panel se inició sin ningún token: no hay sesión que iniciar.",
    },
    "logout.submit": {"en": "Log out", "es": "Cerrar sesión"},
    # the workbench: suites editor, jobs, what the search returned (evaltool.server.workbench_pages)
    "wb.login_to_edit": {"en": "to create, edit or run suites.", "es": "para crear, editar o ejecutar pruebas."},
    "wb.operator_only": {
        "en": "Your token may read and judge; only an operator's may change suites.",
        "es": "Su token permite leer y calificar; solo el de un operador puede modificar pruebas.",
    },
    "wb.state": {"en": "State", "es": "Estado"},
    "wb.state.queued": {"en": "queued", "es": "en cola"},
    "wb.state.running": {"en": "running", "es": "en ejecución"},
    "wb.state.cancelling": {"en": "cancelling", "es": "cancelando"},
    "wb.state.done": {"en": "done", "es": "terminada"},
    "wb.state.failed": {"en": "failed", "es": "fallida"},
    "wb.state.cancelled": {"en": "cancelled", "es": "cancelada"},
    "wb.state.interrupted": {"en": "interrupted", "es": "interrumpida"},
    "wb.progress": {
        "en": "{done}/{total} queries, {failures} failed, {elapsed} s",
        "es": "{done}/{total} consultas, {failures} fallidas, {elapsed} s",
    },
    "wb.progress_column": {"en": "progress", "es": "progreso"},
    "wb.version": {"en": "version", "es": "versión"},
    "wb.version_of": {"en": "{shown} of {current}", "es": "{shown} de {current}"},
    "wb.no_suites": {"en": "No suite yet.", "es": "Todavía no hay pruebas."},
    "wb.run_all": {"en": "Run all active", "es": "Ejecutar todas las activas"},
    "wb.create": {"en": "New suite", "es": "Nueva prueba"},
    "wb.name": {"en": "name", "es": "nombre"},
    "wb.limit": {"en": "results per query", "es": "resultados por consulta"},
    "wb.create_button": {"en": "Create", "es": "Crear"},
    "wb.no_backends": {
        "en": "This server declares no search system to run (evaltool serve --backend NAME=SPEC), so "
        "suites cannot be created here.",
        "es": "Este servidor no declara ningún sistema de búsqueda que ejecutar (evaltool serve "
        "--backend NOMBRE=ESPEC), así que aquí no se pueden crear pruebas.",
    },
    "wb.jobs": {"en": "Runs", "es": "Ejecuciones"},
    "wb.no_jobs": {
        "en": "Nothing has been run from the dashboard yet.",
        "es": "Todavía no se ha ejecutado nada desde el panel.",
    },
    "wb.suite_title": {"en": "Suite", "es": "Prueba"},
    "wb.suite": {"en": "suite", "es": "prueba"},
    "wb.source": {"en": "imported from", "es": "importada de"},
    "wb.created": {"en": "created", "es": "creada"},
    "wb.run": {"en": "Run", "es": "Ejecutar"},
    "wb.not_runnable_here": {
        "en": "Its search system is not one this server declares, so it cannot run here.",
        "es": "Su sistema de búsqueda no está declarado en este servidor, así que aquí no se puede ejecutar.",
    },
    "wb.activate": {"en": "Activate", "es": "Activar"},
    "wb.deactivate": {"en": "Deactivate", "es": "Desactivar"},
    "wb.queries": {"en": "Queries", "es": "Consultas"},
    "wb.show_current": {
        "en": "This is an older version: show the current one.",
        "es": "Esta es una versión anterior: ver la actual.",
    },
    "wb.query_id": {"en": "query", "es": "consulta"},
    "wb.query_text": {"en": "text", "es": "texto"},
    "wb.category": {"en": "category", "es": "categoría"},
    "wb.difficulty": {"en": "difficulty", "es": "dificultad"},
    "wb.relevant": {"en": "relevant ids (grade)", "es": "ids relevantes (grado)"},
    "wb.relevant_hint": {"en": "doc-1 doc-2, or doc-1:2 doc-2:1", "es": "doc-1 doc-2, o doc-1:2 doc-2:1"},
    "wb.query_history": {"en": "history", "es": "historial"},
    "wb.edit": {"en": "Edit", "es": "Editar"},
    "wb.save": {"en": "Save", "es": "Guardar"},
    "wb.remove": {"en": "Remove", "es": "Quitar"},
    "wb.add_query": {"en": "Add a query", "es": "Agregar una consulta"},
    "wb.upload": {"en": "Import a queries file", "es": "Importar un archivo de consultas"},
    "wb.upload_button": {"en": "Import", "es": "Importar"},
    "wb.upload_done": {
        "en": "Imported: version {version}, {count} queries.",
        "es": "Importado: versión {version}, {count} consultas.",
    },
    "wb.upload_hint": {
        "en": "JSON, JSONL or CSV with a header row (id, query, relevant_ids or qrels, category, "
        "difficulty); it replaces the queries as a new version.",
        "es": "JSON, JSONL o CSV con una fila de encabezado (id, query, relevant_ids o qrels, category, "
        "difficulty); reemplaza las consultas como una nueva versión.",
    },
    "wb.versions": {"en": "Versions", "es": "Versiones"},
    "wb.by": {"en": "by", "es": "por"},
    "wb.by_name": {"en": "by {name}", "es": "por {name}"},
    "wb.change": {"en": "change", "es": "cambio"},
    "wb.executions": {"en": "Executions", "es": "Evaluaciones"},
    "wb.compare_last": {
        "en": "Compare what the last two executions returned",
        "es": "Comparar lo que devolvieron las dos últimas evaluaciones",
    },
    "wb.never_run": {"en": "Never run yet.", "es": "Todavía no se ha ejecutado."},
    "wb.audit": {"en": "Changes", "es": "Cambios"},
    "wb.when": {"en": "when (UTC)", "es": "cuándo (UTC)"},
    "wb.action": {"en": "action", "es": "acción"},
    "wb.detail": {"en": "detail", "es": "detalle"},
    "wb.execution": {"en": "evaluation", "es": "evaluación"},
    "wb.queries_done": {"en": "queries", "es": "consultas"},
    "wb.failures": {"en": "failed", "es": "fallidas"},
    "wb.elapsed": {"en": "elapsed", "es": "transcurrido"},
    "wb.open_execution": {"en": "Open the evaluation", "es": "Abrir la evaluación"},
    "wb.job_title": {"en": "Run {id}", "es": "Ejecución {id}"},
    "wb.cancel": {"en": "Cancel", "es": "Cancelar"},
    "wb.interrupted_note": {
        "en": "The server stopped while this run was going on. Resume it to finish it from "
        "where it was: the queries already answered are not sent again.",
        "es": "El servidor se detuvo durante esta ejecución. Reanúdela para terminarla desde "
        "donde quedó: las consultas ya respondidas no se vuelven a enviar.",
    },
    "wb.resume": {"en": "Resume", "es": "Reanudar"},
    "wb.returned": {"en": "What the search returned", "es": "Lo que devolvió la búsqueda"},
    "wb.relevant_grade": {"en": "relevant ({grade})", "es": "relevante ({grade})"},
    "wb.not_relevant": {"en": "not relevant", "es": "no relevante"},
    "wb.unjudged": {"en": "unjudged", "es": "sin juicio"},
    "wb.new": {"en": "new", "es": "nuevo"},
    "wb.same": {"en": "same place", "es": "mismo lugar"},
    "wb.moved": {"en": "{arrow} was {was}", "es": "{arrow} era {was}"},
    "wb.not_in_execution": {"en": "Not in this evaluation.", "es": "No está en esta evaluación."},
    "wb.error": {"en": "error", "es": "error"},
    "wb.nothing_returned": {"en": "Nothing returned.", "es": "No devolvió nada."},
    "wb.missed": {"en": "Relevant, not returned", "es": "Relevantes no devueltos"},
    "wb.lost": {"en": "Lost since the first", "es": "Perdidos respecto de la primera"},
    "wb.latency": {"en": "{ms} ms", "es": "{ms} ms"},
    "wb.compare_title": {"en": "Two evaluations, query by query", "es": "Dos evaluaciones, consulta por consulta"},
    "wb.compare_note": {
        "en": "Each document of the second list is marked new, moved (with its place in the first) "
        "or in the same place; the first list's documents the second lost are listed below it.",
        "es": "Cada documento de la segunda lista se marca como nuevo, movido (con su lugar en la "
        "primera) o en el mismo lugar; debajo se listan los de la primera que la segunda perdió.",
    },
    # a suite version's change (evaltool.history.suites.describe_change) and the audit's actions
    "change.created": {"en": "created with {queries} queries", "es": "creada con {queries} consultas"},
    "change.imported": {"en": "imported {file}", "es": "importada de {file}"},
    "change.upgraded": {
        "en": "imported {file} when the history was upgraded",
        "es": "importada de {file} al actualizar el historial",
    },
    "change.upgrade_failed": {
        "en": "could not import {file} when the history was upgraded",
        "es": "no se pudo importar {file} al actualizar el historial",
    },
    "change.uploaded": {"en": "uploaded {file} ({queries} queries)", "es": "subido {file} ({queries} consultas)"},
    "change.added": {"en": "query {query} added", "es": "consulta {query} agregada"},
    "change.edited": {"en": "query {query} edited", "es": "consulta {query} editada"},
    "change.removed": {"en": "query {query} removed", "es": "consulta {query} quitada"},
    "change.replaced": {"en": "queries replaced", "es": "consultas reemplazadas"},
    "change.judgments": {
        "en": "ground truth from judgment set {set} (version {version})",
        "es": "verdad de referencia del conjunto de juicios {set} (versión {version})",
    },
    "action.create": {"en": "created", "es": "creó"},
    "action.edit": {"en": "edited", "es": "editó"},
    "action.upload": {"en": "uploaded", "es": "subió"},
    "action.activate": {"en": "activated", "es": "activó"},
    "action.deactivate": {"en": "deactivated", "es": "desactivó"},
    "action.run": {"en": "ran", "es": "ejecutó"},
    "action.cancel": {"en": "cancelled", "es": "canceló"},
    "action.resume": {"en": "resumed", "es": "reanudó"},
    # judging (evaltool.server.judging): tasks, a rater's page, agreement
    "nav.judging": {"en": "Judging", "es": "Juicios"},
    "judge.title": {"en": "Judging", "es": "Juicios de relevancia"},
    "judge.login_to_judge": {"en": "with your rater's token to judge.", "es": "con su token de evaluador para juzgar."},
    "judge.task": {"en": "task", "es": "tarea"},
    "judge.set": {"en": "judgment set", "es": "conjunto de juicios"},
    "judge.sets": {"en": "Judgment sets", "es": "Conjuntos de juicios"},
    "judge.scale": {"en": "scale", "es": "escala"},
    "judge.pairs": {"en": "pairs", "es": "pares"},
    "judge.done": {"en": "done", "es": "completos"},
    "judge.ratings": {"en": "ratings", "es": "juicios"},
    "judge.raters": {"en": "raters", "es": "evaluadores"},
    "judge.created": {"en": "created", "es": "creado"},
    "judge.no_tasks": {
        "en": "No judging task yet: make one with 'evaltool pool ... --task NAME --set SET', or "
        "from an evaluation's page (\u201cJudge what nobody judged\u201d).",
        "es": "Todavía no hay tareas de juicio: cree una con 'evaltool pool ... --task NOMBRE --set "
        "CONJUNTO', o desde la página de una evaluación (\u201cJuzgar lo que nadie juzgó\u201d).",
    },
    "judge.no_sets": {"en": "No judgment set yet.", "es": "Todavía no hay conjuntos de juicios."},
    "judge.task_title": {"en": "Task #{id}: {name}", "es": "Tarea n.º {id}: {name}"},
    "judge.mine": {"en": "Judged by you:", "es": "Juzgados por usted:"},
    "judge.task_done": {
        "en": "{done} of {pairs} pairs have their {wanted} rating(s)",
        "es": "{done} de {pairs} pares tienen su(s) {wanted} juicio(s)",
    },
    "judge.queries": {"en": "Queries of the task", "es": "Consultas de la tarea"},
    "judge.query_progress": {"en": "{mine}/{pairs} judged", "es": "{mine}/{pairs} juzgados"},
    "judge.description": {"en": "Description:", "es": "Descripción:"},
    "judge.narrative": {"en": "Narrative:", "es": "Narrativa:"},
    "judge.your_grade": {"en": "Your grade: {label}", "es": "Su juicio: {label}"},
    "judge.not_yet": {"en": "Not judged by you yet.", "es": "Todavía no lo juzgó."},
    "judge.keys": {
        "en": "Keys: {grades}; j or \u2193 next document, k or \u2191 previous, s skip. Each grade is saved at once.",
        "es": "Teclas: {grades}; j o \u2193 documento siguiente, k o \u2191 anterior, s saltar. Cada "
        "juicio se guarda al instante.",
    },
    "judge.save_failed": {"en": "Not saved: {error}", "es": "No se guardó: {error}"},
    "judge.all_done": {
        "en": "You have judged every document of this task. Thank you.",
        "es": "Juzgó todos los documentos de esta tarea. Gracias.",
    },
    "judge.agreement_title": {"en": "Agreement: {name}", "es": "Acuerdo: {name}"},
    "judge.agreement_about": {
        "en": "Version {version}, scale {scale}; raters: {raters}.",
        "es": "Versión {version}, escala {scale}; evaluadores: {raters}.",
    },
    "judge.only_mine": {
        "en": "Only the pairs you judged yourself are shown.",
        "es": "Solo se muestran los pares que usted juzgó.",
    },
    "judge.rated_twice": {"en": "pairs judged by two raters or more", "es": "pares con dos juicios o más"},
    "judge.alpha": {"en": "Krippendorff's alpha (ordinal)", "es": "alfa de Krippendorff (ordinal)"},
    "judge.disagreements": {"en": "Disagreements", "es": "Desacuerdos"},
    "judge.no_disagreements": {
        "en": "The raters gave every pair the same grade.",
        "es": "Los evaluadores dieron el mismo juicio a cada par.",
    },
    "judge.figure": {"en": "figure", "es": "medida"},
    "judge.undefined": {"en": "undefined", "es": "indefinido"},
    "judge.unweighted": {"en": "unweighted", "es": "sin pesos"},
    "judge.linear": {"en": "linear", "es": "lineal"},
    "judge.quadratic": {"en": "quadratic", "es": "cuadrática"},
    "judge.rater_a": {"en": "rater A", "es": "evaluador A"},
    "judge.rater_b": {"en": "rater B", "es": "evaluador B"},
    "judge.weights": {"en": "weights", "es": "pesos"},
    "judge.kappa": {"en": "kappa", "es": "kappa"},
    "judge.document": {"en": "document", "es": "documento"},
    "judge.grades": {"en": "grades by rater", "es": "juicios por evaluador"},
    "judge.per_query": {"en": "Per query", "es": "Por consulta"},
    "judge.qrels": {"en": "qrels ({method})", "es": "qrels ({method})"},
    "judge.ratings_wanted": {"en": "raters per document", "es": "evaluadores por documento"},
    "judge.unjudged_button": {
        "en": "Judge what nobody judged ({count} documents)",
        "es": "Juzgar lo que nadie juzgó ({count} documentos)",
    },
    "scale.binary": {"en": "binary (useful / not useful)", "es": "binaria (útil / no útil)"},
    "scale.graded": {"en": "graded 0-3", "es": "graduada 0-3"},
    "grade.not_useful": {"en": "not useful", "es": "no útil"},
    "grade.useful": {"en": "useful", "es": "útil"},
    "grade.0": {"en": "not relevant", "es": "no relevante"},
    "grade.1": {"en": "related", "es": "relacionado"},
    "grade.2": {"en": "highly relevant", "es": "muy relevante"},
    "grade.3": {"en": "perfectly relevant", "es": "perfectamente relevante"},
    "action.judge": {"en": "judged", "es": "juzgó"},
    # the calibration of a model's judgments (evaltool.server.calibration)
    "cal.title": {"en": "Calibration of a model's judgments", "es": "Calibración de los juicios de un modelo"},
    "cal.about": {
        "en": "How far the grades of a language model (raters llm:...) agree with people's on the pairs "
        "both judged, and whether stored executions come in the same order under both. Read it before "
        "trusting the model's judgments.",
        "es": "Cuánto coinciden los juicios de un modelo de lenguaje (evaluadores llm:...) con los de las "
        "personas en los pares que ambos juzgaron, y si las ejecuciones guardadas se ordenan igual "
        "con unos y otros. Léala antes de confiar en los juicios del modelo.",
    },
    "cal.model_set": {"en": "model's set", "es": "conjunto del modelo"},
    "cal.human_set": {"en": "people's set", "es": "conjunto de las personas"},
    "cal.executions": {"en": "executions", "es": "ejecuciones"},
    "cal.show": {"en": "Calibrate", "es": "Calibrar"},
    "cal.heading": {"en": "{model} against {human}", "es": "{model} frente a {human}"},
    "cal.pairs": {"en": "pairs judged by both", "es": "pares juzgados por ambos"},
    "cal.human_only": {"en": "judged by people only", "es": "juzgados solo por personas"},
    "cal.model_only": {"en": "judged by the model only", "es": "juzgados solo por el modelo"},
    "cal.exact": {"en": "exact agreement", "es": "acuerdo exacto"},
    "cal.difference": {
        "en": "mean grade difference (model - people)",
        "es": "diferencia media de grado (modelo - personas)",
    },
    "cal.measure": {"en": "measure ranking the systems", "es": "medida que ordena los sistemas"},
    "cal.ranked_on": {"en": "judgments the systems are scored with", "es": "juicios con que se puntúan los sistemas"},
    "cal.on_both": {"en": "the pairs both judged", "es": "los pares que ambos juzgaron"},
    "cal.on_all": {"en": "each set whole", "es": "cada conjunto entero"},
    "cal.confusion": {"en": "Confusion matrix", "es": "Matriz de confusión"},
    "cal.corner": {"en": "people \\ model", "es": "personas \\ modelo"},
    "cal.confusion_note": {
        "en": "Rows: the people's grade; columns: the model's. Counts above the diagonal: the "
        "model is more lenient; below it: stricter.",
        "es": "Filas: el grado de las personas; columnas: el del modelo. Lo que queda sobre la "
        "diagonal: el modelo es más indulgente; bajo ella: más estricto.",
    },
    "cal.rankings": {"en": "The systems ranked by {measure}", "es": "Los sistemas ordenados por {measure}"},
    "cal.rank": {"en": "position", "es": "puesto"},
    "cal.by_people": {"en": "with people's judgments", "es": "con los juicios de las personas"},
    "cal.by_model": {"en": "with the model's judgments", "es": "con los juicios del modelo"},
    "cal.swaps": {"en": "The systems that moved most", "es": "Mayores cambios de puesto"},
    "cal.system": {"en": "system", "es": "sistema"},
    "cal.rank_people": {"en": "position (people)", "es": "puesto (personas)"},
    "cal.rank_model": {"en": "position (model)", "es": "puesto (modelo)"},
    "cal.shift": {"en": "shift", "es": "cambio"},
    "cal.link": {"en": "Calibrate a model's judgments", "es": "Calibrar los juicios de un modelo"},
    "llm.title": {"en": "A language model's judgments", "es": "Juicios de un modelo de lenguaje"},
    "llm.about": {
        "en": "The model grades every pair of the task (also those people graded: the calibration compares "
        "them); its grades go to the task's set under the rater llm:MODEL. Read the calibration "
        "before trusting them. Only the models declared with 'evaltool serve --llm' are offered.",
        "es": "El modelo juzga cada par de la tarea (también los que juzgaron personas: la calibración los "
        "compara); sus juicios van al conjunto de la tarea con el evaluador llm:MODELO. Lea la "
        "calibración antes de confiar en ellos. Solo se ofrecen los modelos declarados con "
        "'evaltool serve --llm'.",
    },
    "llm.none_declared": {
        "en": "No language model is declared on this server (evaltool serve --llm NAME=URL,MODEL).",
        "es": "Este servidor no declara ningún modelo de lenguaje (evaltool serve --llm NOMBRE=URL,MODELO).",
    },
    "llm.model": {"en": "model", "es": "modelo"},
    "llm.start": {"en": "Let the model judge the task", "es": "Que el modelo juzgue la tarea"},
    "llm.counts": {
        "en": "{settled}/{pairs} pairs: {judged} judged, {unparsed} unparsed, {failed} failed",
        "es": "{settled}/{pairs} pares: {judged} juzgados, {unparsed} sin interpretar, {failed} fallidos",
    },
    "llm.running": {"en": "running", "es": "en curso"},
    "llm.done": {"en": "done", "es": "terminado"},
    "llm.failed": {"en": "failed", "es": "falló"},
    "llm.calibration": {"en": "calibration", "es": "calibración"},
    "action.llm_judge": {"en": "let a model judge", "es": "hizo juzgar a un modelo"},
}


def check_lang(lang: str) -> str:
    """``lang`` if evaltool speaks it, else an EvaltoolError listing the ones it does."""
    if lang not in LANGUAGES:
        raise EvaltoolError(f"lang {str(lang)[:20]!r}: expected one of {', '.join(LANGUAGES)}")
    return lang


def t(key: str, lang: str = "en", **values) -> str:
    """The text of ``key`` in ``lang`` with ``values`` put in its ``{placeholders}``.
    An unknown key is a KeyError (a programming error); an unknown language an EvaltoolError."""
    return CATALOGUE[key][check_lang(lang)].format(**values) if values else CATALOGUE[key][check_lang(lang)]


def t_or(prefix: str, value: str, lang: str = "en") -> str:
    """The word for a data value that has one (``t_or("kind", "bench", "es")``), else the value itself."""
    entry = CATALOGUE.get(f"{prefix}.{value}")
    return entry[check_lang(lang)] if entry else value
