from bertlint.cli import main

main()
