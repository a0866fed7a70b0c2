// rslab book: prepares the ipywidgets html-manager (vendor/html-manager/embed-amd.js),
// which MyST-NB loads right after require.js on pages with widgets.
(function () {
  "use strict";
  var here = document.currentScript && document.currentScript.src;
  if (here) {
    // The html-manager's bundles find their font files relative to their AMD module
    // paths (@jupyter-widgets/...), which require.js would resolve against the page.
    var dist = new URL("vendor/html-manager", here).href;
    window.__jupyter_widgets_assets_path__ = dist + "/";
    window.require = {
      paths: { "@jupyter-widgets/html-manager/dist": dist, "@jupyter-widgets": dist },
    };
  }
  // The html-manager typesets widget labels with the MathJax 2 API (MathJax.Hub.Queue);
  // the book loads MathJax 3, so give every MathJax object a Hub that forwards to it.
  function hub() {
    return {
      Queue: function (job) {
        var el = Array.isArray(job) ? job[2] : null;
        var mj = window.MathJax;
        if (el && mj && typeof mj.typesetPromise === "function") {
          mj.typesetPromise([el]).catch(function () {});
        }
      },
    };
  }
  function withHub(mj) {
    if (mj && typeof mj === "object" && !("Hub" in mj)) {
      Object.defineProperty(mj, "Hub", { value: hub(), enumerable: false, configurable: true });
    }
    return mj;
  }
  var current = withHub(window.MathJax);
  Object.defineProperty(window, "MathJax", {
    configurable: true,
    enumerable: true,
    get: function () { return current; },
    set: function (value) { current = withHub(value); },
  });
})();
