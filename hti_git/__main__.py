from hti_git.cli import main

main()
