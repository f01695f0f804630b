"""The report's write-up: the analysed folder and its verdicts as pages. The view model
(`view`, with the factor sections, the conditions, the headline and the closing), the
recommendation's state, the energy section, what to run next (`use_this`), and the pages
themselves (`page`: Markdown through the templates, the HTML, verdicts.json), rendered by
`render`. It reads every layer below it (language, analysis, verdicts, ledger); none of them
reads it."""
