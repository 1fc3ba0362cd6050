/**
 * The report's only script, inlined: filters the run list by status, risk (rolled up: a category
 * matches its sub-categories), threat model and text. Navigation needs no script (`:target`).
 */
export const REPORT_JS = `
(function () {
  var status = document.getElementById('filter-status');
  var risk = document.getElementById('filter-risk');
  var threat = document.getElementById('filter-threat');
  var text = document.getElementById('filter-text');
  var count = document.getElementById('filter-count');
  var rows = Array.prototype.slice.call(document.querySelectorAll('#runs-table tbody tr'));
  function apply() {
    var shown = 0;
    rows.forEach(function (tr) {
      var r = tr.getAttribute('data-risk');
      var ok = (!status.value || tr.getAttribute('data-status') === status.value) &&
        (!risk.value || r === risk.value || r.indexOf(risk.value + '/') === 0) &&
        (!threat.value || tr.getAttribute('data-threat') === threat.value) &&
        (!text.value || tr.textContent.toLowerCase().indexOf(text.value.toLowerCase()) >= 0);
      tr.classList.toggle('hidden', !ok);
      if (ok) shown++;
    });
    count.textContent = shown + ' of ' + rows.length + ' runs';
  }
  [status, risk, threat].forEach(function (el) { el.addEventListener('change', apply); });
  text.addEventListener('input', apply);
  apply();
})();
`;
