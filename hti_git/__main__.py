from hti_git.cli import main

# Guarded: worker processes (compile -j N reads PDFs in spawned workers) re-import this module.
if __name__ == "__main__":
    main(prog_name="hti-git")
