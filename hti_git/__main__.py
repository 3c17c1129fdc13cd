from hti_git.cli import main

main(prog_name="hti-git")
