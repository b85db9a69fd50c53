from mem.cli import main

main()
