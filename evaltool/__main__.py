from evaltool.cli import run

run(prog_name="evaltool")
