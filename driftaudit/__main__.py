from driftaudit.cli import main

raise SystemExit(main())
