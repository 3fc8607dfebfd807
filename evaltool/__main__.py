from evaltool.cli import main

main(prog_name="evaltool")
