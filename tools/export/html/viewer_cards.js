// A part of the HTML report's viewer: embed_assets.cmake joins viewer_base.js, viewer_timeline.js,
// viewer_composition.js, viewer_flame.js, viewer_cards.js and viewer_page.js, in that order, into
// one function scope (viewer_base.js opens it, viewer_page.js closes it), so the parts share its
// constants, state and helpers without globals.
// This one: the headline cards and the table of what was live at exit.

