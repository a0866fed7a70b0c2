from rslab.cli import main

raise SystemExit(main())
